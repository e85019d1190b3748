import AuthClient
import AuthProtocol
import SystemKit

/// The prompts the provider answers for OpenSSH, which cannot be asked
/// anything mid-call: ssh-sk-helper's standard input and output are
/// OpenSSH's own channel, so nothing is read from or written to them.
///
/// - A PIN request is answered once with the PIN ssh passed; without one,
///   or when the key refused it, it is cancelled and the call returns
///   `SSH_SK_ERR_PIN_REQUIRED`, so that ssh asks the user and calls again.
/// - With several keys, the user touches the one to use.
/// - The account chooser serves the lookup of an existing resident key
///   (`lookingForUser`): it notes whether the key holds that user's
///   credential and cancels.
/// Naming the key after a registration and confirming transactions are
/// not declared in `hello`, so the daemon applies its defaults (the
/// registration stays, unnamed) without asking.
final class ProviderPrompts: AuthenticatorUI {
    enum PINOutcome: Sendable {
        /// No PIN was asked for, or the one given was taken.
        case none
        /// The key wanted a PIN and ssh had not given one.
        case missing
        /// The key refused the PIN ssh gave.
        case refused
    }

    private struct State {
        var pin: SecretBytes?
        /// The requests the PIN was given for: one session may make two
        /// (the lookup of an existing resident key, then the registration).
        var pinOfferedTo: Set<JSONValue> = []
        var pinOutcome = PINOutcome.none
        var lookingForUser: [UInt8]?
        var foundUser = false
        /// The last wait told on standard error: the daemon repeats its
        /// statuses while a request runs, and each is said once.
        var toldWait: (status: OperationStatus.Status, holder: Holder?)?
    }

    private let state: Protected<State>

    /// - Parameter pin: the PIN ssh passed; zeroed when the last reference
    /// goes, which `close()` drops.
    init(pin: SecretBytes?) { state = Protected(State(pin: pin)) }

    var pinOutcome: PINOutcome { state.withLock { $0.pinOutcome } }

    /// Makes the account chooser look for the credential of `userID`.
    func lookForUser(_ userID: [UInt8]) { state.withLock { $0.lookingForUser = userID; $0.foundUser = false } }
    var foundUser: Bool { state.withLock { $0.foundUser } }

    /// Forgets the PIN.
    func close() { state.withLock { $0.pin = nil } }

    var answeredPrompts: [Prompt.Kind] {
        [.selectAuthenticator, .enterPin, .selectCredential]
    }

    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        writeToStandardError("authkeyd-sk: \(authenticators.count) security keys can serve: touch the one to use\n")
        return .touch
    }

    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        state.withLock { state -> String? in
            switch reason {
            case .required, .current:
                guard !state.pinOfferedTo.contains(operation.request) else {
                    state.pinOutcome = .refused
                    return nil
                }
                guard let pin = state.pin else {
                    state.pinOutcome = .missing
                    return nil
                }
                state.pinOfferedTo.insert(operation.request)
                // The JSON the daemon reads is a string: this copy cannot be
                // zeroed; the buffer of the bytes ssh passed is.
                return pin.withBytes { String(decoding: $0, as: UTF8.self) }
            case .invalid:
                state.pinOutcome = state.pinOfferedTo.contains(operation.request) ? .refused : .missing
                return nil
            default:
                // A new PIN: never asked of ssh.
                return nil
            }
        }
    }

    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool { false }

    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? { nil }

    func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String? {
        state.withLock { state in
            if let user = state.lookingForUser {
                state.foundUser = credentials.contains { $0.user.id.bytes == user }
            }
            return nil
        }
    }

    func statusChanged(_ status: OperationStatus) {
        let news = state.withLock { state -> Bool in
            defer { state.toldWait = (status.status, status.holder) }
            return state.toldWait.map { $0.status != status.status || $0.holder != status.holder } ?? true
        }
        guard news else { return }
        switch status.status {
        case .queued:
            writeToStandardError("authkeyd-sk: the key is busy with another request; waiting for it\n")
        case .busy:
            writeToStandardError("authkeyd-sk: the key is in use by \(status.holder?.description ?? "another program"); waiting for it\n")
        default:
            break
        }
    }
}
