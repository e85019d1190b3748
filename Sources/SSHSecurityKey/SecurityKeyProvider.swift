import Dispatch
import SystemKit

/// OpenSSH's security-key middleware over authkeyd: each call is one
/// request to the broker, queued with every other program's, its prompts
/// answered from what ssh passed.
public struct SecurityKeyProvider: Sendable {
    /// Where the socket is looked up (`AUTHKEYD_SOCKET`, `XDG_RUNTIME_DIR`).
    let environment: [String: String]

    public init(environment: [String: String]) { self.environment = environment }

    /// Runs `body` to its end on Swift's own threads and waits for it: the
    /// C entry points are called on ssh-sk-helper's thread, synchronously.
    public static func wait<T: Sendable>(
        for body: @escaping @Sendable () async throws(ProviderError) -> T
    ) throws(ProviderError) -> T {
        let finished = DispatchSemaphore(value: 0)
        let outcome = Protected<Result<T, ProviderError>?>(nil)
        Task {
            let result: Result<T, ProviderError>
            do throws(ProviderError) {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        finished.wait()
        // Set before the signal, so never nil here.
        return try outcome.withLock { $0 ?? .failure(ProviderError(.general, "the call ended without a result")) }.get()
    }
}
