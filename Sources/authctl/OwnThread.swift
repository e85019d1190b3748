import SystemKit

/// Runs blocking work — waiting for the user to type, reading a pipe — on
/// a thread of its own, so that it never holds one of the few threads
/// async code shares.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        startThread(name: "authctl-input") { continuation.resume(returning: work()) }
    }
}
