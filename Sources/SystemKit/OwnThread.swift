/// Runs blocking work — waiting for the user to type, reading a pipe, a
/// PAM conversation — on a thread of its own, so that it never holds one
/// of the few threads async code shares.
public func runOnOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        startThread(name: "blocking-call") { continuation.resume(returning: work()) }
    }
}
