import AuthClient
import AuthProtocol
import SystemKit

/// authctl's side of the UI handshake. Every prompt is answered from the
/// command line first (CommandLineAnswers), else at the terminal when
/// there is one, else cancelled: a run without a terminal never waits for
/// input that cannot come.
struct CommandLineUI: AuthenticatorUI {
    let answers: CommandLineAnswers
    let terminal: Terminal?
    /// Where the cues and the news of a refused PIN go (standard error).
    let output: any ConsoleOutput
    let cues: StatusCues
    /// What a new PIN must be, to word the prompt (the key's minimum, when
    /// the command read it).
    let newPINRules: NewPINRules
    private let given = GivenPINs()
    /// The account chooser's answers (`--user`, the terminal's list).
    let accounts = AccountChoice()

    /// Asks at `console`'s terminal, if it has one.
    init(answers: CommandLineAnswers, console: Console, cues: StatusCues = StatusCues(), newPINRules: NewPINRules = NewPINRules(keyMinimum: nil)) {
        self.answers = answers
        terminal = console.terminal()
        output = console.output
        self.cues = cues
        self.newPINRules = newPINRules
    }

    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        cues.forget()
        if let id = answers.authenticator { return .authenticator(id: id) }
        guard let terminal else { return nil }
        return await runOnOwnThread { terminal.chooseAuthenticator(authenticators, operation: operation) }
    }

    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        cues.forget()
        if let known = given.reusable(for: reason, key: authenticator.id) { return known }
        let refusal = reason == .newRejected ? given.whyRefused(newPINRules) : nil
        let pin: String?
        if let pins = answers.pins {
            // A script learns why its new PIN was refused before the next line is read.
            if let refusal { output.writeError("authctl: the key refused the new PIN (\(refusal))\n") }
            pin = await runOnOwnThread { pins.next() }
        } else if let terminal {
            pin = await runOnOwnThread { [newPINRules] in
                terminal.enterPIN(
                    for: authenticator, operation: operation, reason: reason, retries: retries, rules: newPINRules, refusal: refusal)
            }
        } else {
            return nil
        }
        if let pin { given.record(pin, for: reason, key: authenticator.id) }
        return pin
    }

    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool {
        cues.forget()
        if let confirmation = answers.confirmation { return confirmation }
        guard let terminal else { return false }
        return await runOnOwnThread { terminal.confirm(transaction, operation: operation) }
    }

    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? {
        cues.forget()
        if let name = answers.friendlyName { return name }
        guard let terminal else { return nil }
        return await runOnOwnThread { terminal.nameAuthenticator(suggestion: suggestion) }
    }

    func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String? {
        cues.forget()
        return await accounts.choose(credentials, user: answers.userName, operation: operation, terminal: terminal)
    }

    func statusChanged(_ status: OperationStatus) { cues.show(status, to: output) }
}
