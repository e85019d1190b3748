import AuthClient
import AuthProtocol

/// authctl's side of the UI handshake. Every prompt is answered from the
/// command line first (CommandLineAnswers), else at the terminal when
/// there is one, else cancelled: a run without a terminal never waits for
/// input that cannot come.
struct CommandLineUI: AuthenticatorUI {
    let answers: CommandLineAnswers
    let terminal: Terminal?
    let cues = StatusCues()

    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        cues.forget()
        if let id = answers.authenticator { return .authenticator(id: id) }
        guard let terminal else { return nil }
        return await onOwnThread { terminal.chooseAuthenticator(authenticators, operation: operation) }
    }

    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        cues.forget()
        if let pins = answers.pins { return await onOwnThread { pins.next() } }
        guard let terminal else { return nil }
        return await onOwnThread { terminal.enterPIN(for: authenticator, reason: reason, retries: retries) }
    }

    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool {
        cues.forget()
        if let confirmation = answers.confirmation { return confirmation }
        guard let terminal else { return false }
        return await onOwnThread { terminal.confirm(transaction, operation: operation) }
    }

    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? {
        cues.forget()
        if let name = answers.friendlyName { return name }
        guard let terminal else { return nil }
        return await onOwnThread { terminal.nameAuthenticator(suggestion: suggestion) }
    }

    func statusChanged(_ status: OperationStatus) { cues.show(status) }
}
