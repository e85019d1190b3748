import AuthProtocol

/// The protocol's methods as Swift calls.
extension AuthClient {
    public func hello(client: String) async throws(AuthClientError) -> HelloResult {
        try await call(Method.hello, HelloParams(protocol: protocolVersion, client: client), as: HelloResult.self)
    }

    public func listAuthenticators() async throws(AuthClientError) -> [Authenticator] {
        try await call(Method.listAuthenticators, [String: String](), as: AuthenticatorList.self).authenticators
    }

    public func authenticatorInfo(_ id: String) async throws(AuthClientError) -> AuthenticatorDetails {
        try await call(Method.authenticatorInfo, AuthenticatorParams(authenticator: id), as: AuthenticatorDetails.self)
    }

    /// Starts watching: returns the keys present now; `authenticatorEvents`
    /// then reports every change.
    public func watchAuthenticators() async throws(AuthClientError) -> [Authenticator] {
        try await call(Method.watchAuthenticators, [String: String](), as: AuthenticatorList.self).authenticators
    }

    /// Touch-to-select: the key the user touches.
    public func selectByTouch(
        timeout: Duration? = nil, onStatus: (@Sendable (OperationStatus) -> Void)? = nil
    ) async throws(AuthClientError) -> Authenticator {
        let params = SelectParams(timeout: timeout.map { Int($0.components.seconds) * 1000 + Int($0.components.attoseconds / 1_000_000_000_000_000) })
        return try await call(Method.selectAuthenticator, params, as: AuthenticatorEvent.self, onStatus: onStatus).authenticator
    }

    /// Changes to the set of keys, after `watchAuthenticators()`.
    public var authenticatorEvents: AsyncCompactMapSequence<AsyncStream<DaemonNotification>, AuthenticatorChange> {
        notifications.compactMap { notification in
            guard let event = try? JSONValueDecoder().decode(AuthenticatorEvent.self, from: notification.params) else {
                return nil
            }
            switch notification.method {
            case Method.authenticatorAdded: return .added(event.authenticator)
            case Method.authenticatorRemoved: return .removed(event.authenticator)
            case Method.authenticatorChanged: return .changed(event.authenticator)
            default: return nil
            }
        }
    }
}

/// One change reported to a watcher.
public enum AuthenticatorChange: Sendable, Equatable {
    case added(Authenticator)
    case removed(Authenticator)
    case changed(Authenticator)

    public var authenticator: Authenticator {
        switch self {
        case .added(let a), .removed(let a), .changed(let a): return a
        }
    }
}
