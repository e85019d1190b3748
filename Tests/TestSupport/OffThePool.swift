import AuthProtocol
import Foundation

/// Runs blocking work (a child process such as py_webauthn or fido2-tools)
/// on a thread of its own, and awaits it.
///
/// The broker in process (AuthDaemonTests), its clients and every test of
/// a target share Swift's cooperative pool, one thread a core (two on the CI machine): a
/// test that blocks one waiting for Python holds up the brokers of all the
/// others, and a timing test beside it fails for no fault of the broker.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

extension RelyingPartyVerifier {
    /// `verify`, off the cooperative pool.
    public static func verifying(_ mode: String, _ request: JSONValue) async throws -> Result<JSONValue, VerificationFailure> {
        try await offThePool { try verify(mode, request) }
    }
}
