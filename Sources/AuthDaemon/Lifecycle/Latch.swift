import SystemKit

/// A one-way gate: closed until `open()`, open for good after. What waits
/// on it (`wait()`, `onOpen`) goes on once, when it opens.
///
/// The lifecycle's events are latches (graceful shutdown requested, the key
/// sources counted): each happens once, and a service that looks late must
/// still see that it happened, which a stream of events would not show it.
public final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var handlers: [@Sendable () -> Void] = []
    }

    // `Protected`, not `Mutex`: ThreadSanitizer sees its pthread mutex.
    private let state = Protected(State())

    public init() {}

    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the latch; the handlers run here, on the caller's thread, in
    /// the order they came. Opening it again does nothing.
    public func open() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.isOpen else { return [] }
            state.isOpen = true
            defer { state.handlers = [] }
            return state.handlers
        }
        handlers.forEach { $0() }
    }

    /// Runs `handler` when the latch opens, or now if it is open.
    public func onOpen(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if !state.isOpen { state.handlers.append(handler) }
            return state.isOpen
        }
        if runNow { handler() }
    }

    /// Returns once the latch is open, or once the task is cancelled. (A
    /// cancelled wait leaves its handler behind, a no-op when the latch
    /// opens: latches live as long as one run of the daemon.)
    public func wait() async {
        let waiter = Waiter()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiter.install(continuation)
                onOpen { waiter.finish() }
            }
        } onCancel: {
            waiter.finish()
        }
    }
}

/// One task waiting on a latch: resumed once, by whichever comes first of
/// the latch opening and the task's cancellation, which may come even
/// before the continuation exists.
private final class Waiter: Sendable {
    private enum State {
        case waiting
        case installed(CheckedContinuation<Void, Never>)
        case finished
    }

    private let state = Protected(State.waiting)

    func install(_ continuation: CheckedContinuation<Void, Never>) {
        let finishedAlready = state.withLock { state -> Bool in
            guard case .waiting = state else { return true }
            state = .installed(continuation)
            return false
        }
        if finishedAlready { continuation.resume() }
    }

    func finish() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .finished }
            if case .installed(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume()
    }
}
