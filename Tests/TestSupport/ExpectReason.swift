import AuthClient
import AuthProtocol
import Testing

/// Expects the call to fail with the daemon's `reason`.
public func expectReason<T>(
    _ reason: ErrorReason, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> T
) async {
    do {
        _ = try await call()
        Issue.record("expected \(reason), but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as AuthClientError {
        #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(reason), got \(error)", sourceLocation: sourceLocation)
    }
}
