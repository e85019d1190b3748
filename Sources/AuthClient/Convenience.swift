import AuthProtocol

/// The protocol's methods as Swift calls.
extension AuthClient {
    /// `hello`: the protocol version, and the prompts this client answers
    /// (`prompts`, by their names such as `selectCredential`; nil says all).
    /// The daemon applies its documented default to a prompt left out
    /// instead of sending it; a name that is no prompt's is `invalidParams`.
    public func hello(client: String, answering prompts: [String]? = nil) async throws(AuthClientError) -> HelloResult {
        try await call(Method.hello, HelloParams(protocol: protocolVersion, client: client, ui: prompts), as: HelloResult.self)
    }

    /// `hello` declaring the prompts `ui` answers (`AuthenticatorUI.answeredPrompts`).
    public func hello(client: String, ui: any AuthenticatorUI) async throws(AuthClientError) -> HelloResult {
        try await hello(client: client, answering: ui.answeredPrompts.map(\.rawValue))
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
