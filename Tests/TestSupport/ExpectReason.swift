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

/// Expects the call to fail with the daemon's `reason`, its message containing `text`.
public func expectReason<T>(
    _ reason: ErrorReason, containing text: String, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> T
) async {
    do {
        _ = try await call()
        Issue.record("expected \(reason), but the call succeeded", sourceLocation: sourceLocation)
    } catch AuthClientError.daemon(let error) {
        #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(text), "message: \(error.message)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(reason), got \(error)", sourceLocation: sourceLocation)
    }
}
