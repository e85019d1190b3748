import AuthClient
import AuthProtocol
import SystemKit

/// The prompts the module answers itself, through the PAM conversation:
/// the PIN (`PAM_PROMPT_ECHO_OFF`, with the attempts left) and the touch
/// cue (`PAM_TEXT_INFO`, with `cue`). It declares only `enterPin` in
/// `hello`: the daemon lets the user touch the key they mean where
/// several could serve, and sends what else there is to ask to the user's
/// session agent, which also shows the touch cue (many graphical PAM
/// front ends show `PAM_TEXT_INFO` late or never).
final class PAMPrompts: AuthenticatorUI {
    /// A user asked for the PIN this often in one authentication has
    /// mistyped it enough: the module stops before the key locks.
    static let maximumPINAttempts = 3

    private let conversation: Conversation
    private let cueText: String?
    private let state = Protected((pinsAsked: 0, cue: nil as Task<Void, Never>?))

    init(conversation: Conversation, options: ModuleOptions) {
        self.conversation = conversation
        cueText = options.cue ? options.cuePrompt ?? "Please touch the device." : nil
    }

    var answeredPrompts: [Prompt.Kind] { [.enterPin] }

    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        let attempt = state.withLock { state -> Int in
            state.pinsAsked += 1
            return state.pinsAsked
        }
        guard attempt <= Self.maximumPINAttempts, reason == .required || reason == .invalid else { return nil }
        // The key as the chooser names it, the attempts as every prompt words them.
        let key = authenticator.displayName
        let left = PINPromptWording.retriesNote(retries)
        let wrong = reason == .invalid ? "Wrong PIN. " : ""
        let conversation = conversation
        let pin = await runOnOwnThread { conversation.askHidden("\(wrong)PIN for security key \"\(key)\"\(left): ") }
        guard let pin, !pin.isEmpty else { return nil }
        return pin
    }

    func statusChanged(_ status: OperationStatus) {
        guard let cueText, status.status == .waitingForTouch || status.status == .waitingForUv else { return }
        let conversation = conversation
        state.withLock { state in
            // Once per authentication, as pam_u2f; off the client's reader
            // thread, since the application may take its time to show it.
            guard state.cue == nil else { return }
            state.cue = Task { await runOnOwnThread { conversation.inform(cueText) } }
        }
    }

    /// Waits for the cue to have been shown, if one was: the application's
    /// conversation must not be called after pam_sm_authenticate returns.
    func finishCue() async {
        await state.withLock { $0.cue }?.value
    }

    // Not declared in hello: the daemon never sends these.
    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? { .touch }
    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool { false }
    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? { nil }
}
