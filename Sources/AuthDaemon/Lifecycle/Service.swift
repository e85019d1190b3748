/// A part of the daemon with a lifetime of its own (the listening socket,
/// the key sources, the broker), run by a `ServiceGroup`.
///
/// `run()` does the service's work until the group asks for a graceful
/// shutdown (`GracefulShutdown.wait()` returns), then finishes what it must
/// and returns. A service that returns or throws early ends the group: the
/// others are shut down too. One that does not return by the group's hard
/// deadline is cancelled and abandoned.
public protocol Service: Sendable {
    func run() async throws
}

/// The graceful-shutdown request of the group running the current service,
/// handed to every service as a task-local value (as swift-service-lifecycle
/// does), so that `run()` takes no parameters and a service run on its own
/// (a test) simply never sees a request.
public enum GracefulShutdown {
    @TaskLocal static var request: Latch?

    /// Returns once the group asks for a graceful shutdown (or the task is
    /// cancelled; outside a group, only then).
    public static func wait() async {
        if let request { await request.wait() } else { await Latch().wait() }
    }

    /// Whether the group has asked for a graceful shutdown.
    public static var isRequested: Bool { request?.isOpen ?? false }

    /// Runs `handler` when the group asks for a graceful shutdown (at once
    /// if it has); never outside a group.
    public static func onRequest(_ handler: @escaping @Sendable () -> Void) {
        request?.onOpen(handler)
    }
}
