import Dispatch
import Glibc
import SystemKit

/// Runs services together and ends them together (the shape of
/// swift-service-lifecycle's `ServiceGroup`).
///
/// A graceful shutdown starts once: on a shutdown signal, on
/// `triggerGracefulShutdown()`, or when a service returns or throws. The
/// services are asked to stop in the reverse of their order, each once the
/// one after it has returned (as they were started: the broker before the
/// key sources, the key sources before the listener; so the listener stops
/// taking clients first, and the broker, which closes the keys, stops
/// last), or once that one has had its share of the deadline (the deadline
/// over the number of services) without returning: one that hangs holds
/// up the others only that long. From the start of the shutdown one hard
/// deadline runs; a service still running at it is cancelled and
/// abandoned, and `run()` throws.
/// Reload signals run `onReload`, one reload after another.
public final class ServiceGroup: Sendable {
    private enum Event: Sendable {
        case signal(Int32)
        case shutdownRequested
        case ended(service: Int, Result<Void, any Error>)
        /// The service asked to stop at that step has had its share of the deadline.
        case stepPassed(Int)
        case deadlinePassed
    }

    private let services: [any Service]
    private let signals: AsyncStream<Int32>?
    private let shutdownSignals: Set<Int32>
    private let reloadSignals: Set<Int32>
    private let onReload: @Sendable () async -> Void
    private let shutdownDeadline: Duration
    private let executor: (any TaskExecutor)?
    private let events: AsyncStream<Event>
    private let post: AsyncStream<Event>.Continuation
    private let timerQueue = DispatchQueue(label: "authkeyd.service-group")

    /// - Parameters:
    ///   - signals: the signals the group follows (`signalSequence`), or
    ///     none: then only `triggerGracefulShutdown()` or a service's end
    ///     stops it.
    ///   - shutdownDeadline: how long the services have, from the start of
    ///     the graceful shutdown, to return.
    ///   - executor: where the services' tasks run (the broker's queue, so
    ///     that Swift's global pool stays unused); nil for the default.
    public init(
        services: [any Service], signals: AsyncStream<Int32>? = nil,
        shutdownSignals: Set<Int32> = [SIGTERM, SIGINT], reloadSignals: Set<Int32> = [SIGHUP],
        onReload: @escaping @Sendable () async -> Void = {}, shutdownDeadline: Duration,
        executor: (any TaskExecutor)? = nil
    ) {
        self.services = services
        self.signals = signals
        self.shutdownSignals = shutdownSignals
        self.reloadSignals = reloadSignals
        self.onReload = onReload
        self.shutdownDeadline = shutdownDeadline
        self.executor = executor
        (events, post) = AsyncStream.makeStream(of: Event.self)
    }

    /// Starts the graceful shutdown, as a shutdown signal does.
    public func triggerGracefulShutdown() {
        post.yield(.shutdownRequested)
    }

    /// Runs the services until all have returned; call it once. Throws the
    /// first service's error, or `deadlineExceeded` when some were
    /// abandoned.
    public func run() async throws(ServiceGroupError) {
        try await withTaskExecutorPreference(executor) { () async throws(ServiceGroupError) in try await runServices() }
    }

    private func runServices() async throws(ServiceGroupError) {
        // Each service's own request, opened in turn (`stopNext`).
        let requests = services.map { _ in Latch() }
        let tasks = services.enumerated().map { index, service in
            Task(executorPreference: executor) { [post] in
                let outcome: Result<Void, any Error>
                do {
                    try await GracefulShutdown.$request.withValue(requests[index]) { try await service.run() }
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                post.yield(.ended(service: index, outcome))
            }
        }
        let listening = signals.map { signals in
            Task(executorPreference: executor) { [post] in
                for await number in signals { post.yield(.signal(number)) }
            }
        }
        defer { listening?.cancel() }

        var running = Set(services.indices)
        var failure: ServiceGroupError?
        var reloading: Task<Void, Never>?
        var shuttingDown = false
        var step = 0
        let share = shutdownDeadline / max(1, services.count)
        /// Asks the last service still running that has not been asked to
        /// stop, once every later one has returned or had its share.
        func stopNext(afterShare: Bool = false) {
            guard let next = running.filter({ !requests[$0].isOpen }).max() else { return }
            guard afterShare || running.allSatisfy({ $0 <= next }) else { return }
            requests[next].open()
            step += 1
            timerQueue.asyncAfter(deadline: .now() + .milliseconds(share.wholeMilliseconds)) { [post, step] in
                post.yield(.stepPassed(step))
            }
        }
        func beginShutdown() {
            guard !shuttingDown else { return }
            shuttingDown = true
            stopNext()
            timerQueue.asyncAfter(deadline: .now() + .milliseconds(shutdownDeadline.wholeMilliseconds)) { [post] in
                post.yield(.deadlinePassed)
            }
        }
        guard !running.isEmpty else { return }
        for await event in events {
            switch event {
            case .shutdownRequested:
                beginShutdown()
            case .signal(let number) where shutdownSignals.contains(number):
                beginShutdown()
            case .signal(let number) where reloadSignals.contains(number):
                // Not while shutting down: the services it would touch are going.
                guard !shuttingDown else { break }
                let previous = reloading, onReload = onReload
                reloading = Task(executorPreference: executor) {
                    await previous?.value
                    await onReload()
                }
            case .signal:
                break
            case .ended(let index, let outcome):
                running.remove(index)
                if case .failure(let error) = outcome, failure == nil {
                    failure = .serviceFailed(Self.name(of: services[index]), error)
                }
                beginShutdown()
                if running.isEmpty {
                    if let failure { throw failure }
                    return
                }
                stopNext()
            case .stepPassed(let passed):
                // The service asked then is still running: the next goes too.
                if passed == step { stopNext(afterShare: true) }
            case .deadlinePassed:
                for index in running { tasks[index].cancel() }
                throw .deadlineExceeded(shutdownDeadline, unfinished: running.sorted().map { Self.name(of: services[$0]) })
            }
        }
    }

    private static func name(of service: any Service) -> String { "\(type(of: service))" }
}

public enum ServiceGroupError: Error, CustomStringConvertible {
    /// A service threw; the others were shut down.
    case serviceFailed(String, any Error)
    /// These services had not returned by the hard deadline, and were abandoned.
    case deadlineExceeded(Duration, unfinished: [String])

    public var description: String {
        switch self {
        case .serviceFailed(let service, let error):
            return "\(service) failed: \(error)"
        case .deadlineExceeded(let deadline, let unfinished):
            return "shutdown did not finish within \(deadline): abandoned \(unfinished.joined(separator: ", "))"
        }
    }
}
