import AuthProtocol
import SystemKit

/// The user's answer to `showAuthenticators`.
public enum AuthenticatorChoice: Sendable, Equatable {
    /// This key.
    case authenticator(id: String)
    /// Let the user touch the key they mean.
    case touch
}

/// The UI handshake as async functions: return nil (or false) to cancel.
/// Set one with `AuthClient.setUI(_:)` before calling `createCredential` or
/// `getCredential`.
public protocol AuthenticatorUI: Sendable {
    /// showAuthenticators: several keys could serve; which one?
    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice?
    /// The key needs its PIN; `reason` says whether the last one was wrong.
    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String?
    /// showTransactionDetails: sign exactly these details?
    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool
    /// retrieveAuthenticatorDescription: a name for the key just registered.
    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String?
    /// "Touch your key", "waiting for your fingerprint", "queued", …
    func statusChanged(_ status: OperationStatus)
    /// The account chooser: the key holds several credentials for the
    /// relying party (newest first); which one? Return the `id` of one of
    /// them, or nil to cancel. The default takes the newest, as the daemon
    /// does for a client that does not answer `ui.selectCredential`.
    func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String?
    /// The prompts this UI answers, for `AuthClient.hello(client:ui:)`.
    /// The daemon applies its documented default to the others without
    /// asking (authkeyd-protocol(7)). The default is every prompt.
    var answeredPrompts: [Prompt.Kind] { get }
}

extension AuthenticatorUI {
    public func statusChanged(_ status: OperationStatus) {}

    public func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String? {
        credentials.first?.id
    }

    public var answeredPrompts: [Prompt.Kind] { Prompt.Kind.allCases }
}

/// The handshake as Thales' `TGFFido2UiDelegate` shapes it: each prompt
/// hands the delegate handlers to call, once, when the user has decided.
public protocol AuthenticatorUIDelegate: AnyObject, Sendable {
    func showAuthenticators(
        _ authenticators: [Authenticator], operation: OperationInfo,
        selectionHandler: @escaping @Sendable (AuthenticatorChoice) -> Void, cancelHandler: @escaping @Sendable () -> Void)
    func enterPIN(
        for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?,
        pinHandler: @escaping @Sendable (String) -> Void, cancelHandler: @escaping @Sendable () -> Void)
    func showTransactionDetails(
        _ transaction: Transaction, operation: OperationInfo,
        proceedHandler: @escaping @Sendable () -> Void, cancelHandler: @escaping @Sendable () -> Void)
    func retrieveAuthenticatorDescription(
        for authenticator: Authenticator, operation: OperationInfo, suggestion: String?,
        completionHandler: @escaping @Sendable (String?) -> Void)
    func operationStatusChanged(_ status: OperationStatus)
    /// The account chooser (`ui.selectCredential`): call `selectionHandler`
    /// with the `id` of the credential the user picked. The default picks
    /// the newest, the first.
    func showCredentials(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo,
        selectionHandler: @escaping @Sendable (String) -> Void, cancelHandler: @escaping @Sendable () -> Void)
    /// The prompts this delegate answers (`AuthenticatorUI.answeredPrompts`); every one by default.
    var answeredPrompts: [Prompt.Kind] { get }
}

extension AuthenticatorUIDelegate {
    public func operationStatusChanged(_ status: OperationStatus) {}

    public func showCredentials(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo,
        selectionHandler: @escaping @Sendable (String) -> Void, cancelHandler: @escaping @Sendable () -> Void
    ) {
        if let newest = credentials.first { selectionHandler(newest.id) } else { cancelHandler() }
    }

    public var answeredPrompts: [Prompt.Kind] { Prompt.Kind.allCases }
}

/// Adapts a completion-handler delegate to `AuthenticatorUI`. A handler
/// called twice counts once; the first answer stands.
public struct DelegateAdapter: AuthenticatorUI {
    public let delegate: any AuthenticatorUIDelegate

    public init(_ delegate: any AuthenticatorUIDelegate) { self.delegate = delegate }

    public func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        await answer { once in
            delegate.showAuthenticators(
                authenticators, operation: operation, selectionHandler: { once.resume($0) }, cancelHandler: { once.resume(nil) })
        }
    }

    public func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        await answer { once in
            delegate.enterPIN(
                for: authenticator, operation: operation, reason: reason, retries: retries,
                pinHandler: { once.resume($0) }, cancelHandler: { once.resume(nil) })
        }
    }

    public func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool {
        await answer { once in
            delegate.showTransactionDetails(
                transaction, operation: operation, proceedHandler: { once.resume(true) }, cancelHandler: { once.resume(false) })
        } ?? false
    }

    public func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? {
        await answer { once in
            delegate.retrieveAuthenticatorDescription(
                for: authenticator, operation: operation, suggestion: suggestion, completionHandler: { once.resume($0) })
        } ?? nil
    }

    public func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String? {
        await answer { once in
            delegate.showCredentials(
                credentials, on: authenticator, operation: operation,
                selectionHandler: { once.resume($0) }, cancelHandler: { once.resume(nil) })
        }
    }

    public var answeredPrompts: [Prompt.Kind] { delegate.answeredPrompts }

    public func statusChanged(_ status: OperationStatus) { delegate.operationStatusChanged(status) }

    private func answer<T: Sendable>(_ ask: (OnceContinuation<T?>) -> Void) async -> T? {
        await withCheckedContinuation { continuation in ask(OnceContinuation(continuation)) }
    }
}

/// A continuation that tolerates being resumed more than once.
final class OnceContinuation<T: Sendable>: Sendable {
    private let continuation: Protected<CheckedContinuation<T, Never>?>
    init(_ continuation: CheckedContinuation<T, Never>) { self.continuation = Protected(continuation) }
    func resume(_ value: T) {
        continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }?.resume(returning: value)
    }
}

extension AuthClient {
    /// Answers the daemon's prompts with `ui`, and tells it every
    /// `operation.status`; nil answers every prompt `cancel`.
    public func setUI(_ ui: (any AuthenticatorUI)?) {
        guard let ui else {
            setStatusObserver(nil)
            return setRequestHandler(nil)
        }
        setStatusObserver { @Sendable status in ui.statusChanged(status) }
        setRequestHandler(Self.requestHandler(answering: ui))
    }

    /// The handler that answers the daemon's prompts with `ui`: for a
    /// client that wraps each answer (a session agent runs each in a task
    /// it can cancel).
    public static func requestHandler(answering ui: any AuthenticatorUI) -> RequestHandler {
        { method, params in
            let reply: PromptReply
            do {
                reply = try await Self.answer(method, params, ui: ui)
            } catch {
                return .failure(RPCError(.invalidParams, "cannot read \(method): \(error)"))
            }
            return (try? JSONValueEncoder().encode(reply)).map(Result.success)
                ?? .failure(RPCError(.internalError, "cannot encode the reply"))
        }
    }

    private static func answer(_ method: String, _ params: JSONValue, ui: any AuthenticatorUI) async throws -> PromptReply {
        // A prompt this client does not know (a newer daemon's): decline
        // rather than guess.
        guard let prompt = try Prompt(method: method, params: params) else { return .cancel }
        switch prompt {
        case .selectAuthenticator(let prompt):
            switch await ui.selectAuthenticator(prompt.authenticators, operation: prompt.operation) {
            case .authenticator(let id)?: return PromptReply(action: .proceed, authenticator: id)
            case .touch?: return PromptReply(action: .proceed, touch: true)
            case nil: return .cancel
            }
        case .enterPin(let prompt):
            guard let pin = await ui.enterPIN(for: prompt.authenticator, operation: prompt.operation, reason: prompt.reason, retries: prompt.retries) else {
                return .cancel
            }
            return PromptReply(action: .proceed, pin: pin)
        case .confirmTransaction(let prompt):
            return await ui.confirmTransaction(prompt.transaction, operation: prompt.operation) ? .proceed : .cancel
        case .describeAuthenticator(let prompt):
            guard let name = await ui.describeAuthenticator(prompt.authenticator, operation: prompt.operation, suggestion: prompt.suggestion) else {
                return .cancel
            }
            return PromptReply(action: .proceed, friendlyName: name)
        case .selectCredential(let prompt):
            guard let id = await ui.selectCredential(prompt.credentials, on: prompt.authenticator, operation: prompt.operation) else {
                return .cancel
            }
            return PromptReply(action: .proceed, credential: id)
        }
    }

    /// Registers a credential (`credentials.create`); prompts go to the UI
    /// set with `setUI`. `onStart` receives the request id, for `cancel(requestID:)`.
    public func createCredential(_ params: CreateParams, onStart: ((Int64) -> Void)? = nil) async throws(AuthClientError) -> CredentialResult {
        try await call(Method.createCredential, params, as: CredentialResult.self, onStart: onStart)
    }

    /// Authenticates (`credentials.get`); prompts go to the UI set with `setUI`.
    /// Extension outputs are typed on the result: `prfOutputs` and
    /// `hmacGetSecretOutput`, secrets to keep out of logs and files.
    public func getCredential(_ params: GetParams, onStart: ((Int64) -> Void)? = nil) async throws(AuthClientError) -> CredentialResult {
        try await call(Method.getCredential, params, as: CredentialResult.self, onStart: onStart)
    }

    public func listRegistrations() async throws(AuthClientError) -> [Registration] {
        try await call(Method.listRegistrations, [String: String](), as: RegistrationList.self).registrations
    }

    public func renameRegistration(id: String, to name: String) async throws(AuthClientError) -> Registration {
        try await call(Method.renameRegistration, RenameRegistrationParams(id: id, friendlyName: name), as: Registration.self)
    }

    public func deleteRegistration(id: String) async throws(AuthClientError) {
        _ = try await call(Method.deleteRegistration, params: ["id": .string(id)])
    }
}
