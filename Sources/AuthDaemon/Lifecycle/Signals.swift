import Dispatch
import SystemKit
import Glibc

/// Signals as an async sequence: each delivery of one of `numbers` is an
/// element, in the order they came.
///
/// The signals' default actions (SIGTERM and SIGINT end the process,
/// SIGHUP too) are turned off while the sequence is iterated, as the
/// daemon always had them: a Dispatch signal source sees a signal whatever
/// its disposition, and the process must not die of one it handles. When
/// iteration ends (the consuming task is cancelled or stops), the sources
/// are cancelled and the dispositions put back.
public func signalSequence(_ numbers: [Int32]) -> AsyncStream<Int32> {
    // A serial queue of its own: a signal handler that only yields needs
    // no other company.
    let queue = DispatchQueue(label: "authkeyd.signals")
    return AsyncStream { continuation in
        let handlers = SignalSources(numbers: numbers, queue: queue) { continuation.yield($0) }
        continuation.onTermination = { _ in handlers.cancel() }
    }
}

/// The Dispatch sources behind `signalSequence`, with the dispositions they
/// replaced.
private final class SignalSources: Sendable {
    private let sources: [SendableSignalSource]

    init(numbers: [Int32], queue: DispatchQueue, deliver: @escaping @Sendable (Int32) -> Void) {
        sources = numbers.map { number in
            let previous = setSignalHandler(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { deliver(number) }
            source.resume()
            return SendableSignalSource(number: number, source: source, previous: previous)
        }
    }

    func cancel() {
        for entry in sources {
            entry.source.cancel()
            setSignalHandler(entry.number, entry.previous)
        }
    }
}

/// A signal source and the disposition it replaced. Sendable: a Dispatch
/// source may be cancelled from any thread, and the rest is constant.
private struct SendableSignalSource: @unchecked Sendable {
    let number: Int32
    let source: any DispatchSourceSignal
    let previous: __sighandler_t?
}
