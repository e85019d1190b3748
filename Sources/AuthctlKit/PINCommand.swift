import AuthClient
import AuthProtocol

/// `authctl pin set ID | change ID | retries ID`. PINs reach the daemon only
/// through its `ui.enterPin` prompts: typed at the terminal (a new one
/// twice), or read from `--pin-fd`, a line a prompt (for a change: the
/// current PIN, then the new one, then the current again if it was wrong).
struct PINCommand: Sendable {
    enum Action: String, Sendable {
        case set, change, retries
    }

    static let usage = "pin takes: set ID, change ID, or retries ID"

    let action: Action
    let key: ManagedKey

    init(_ arguments: Arguments) throws(UsageError) {
        (action, key, _) = try ManagedKey.parse("pin", arguments, usage: Self.usage) { (_: Action) in (0, []) }
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        switch action {
        case .set, .change:
            // The key's minimum length, for the new-PIN prompt to tell.
            let minimum = try await client.authenticatorInfo(key.id).info.minPinLength
            key.answerPrompts(on: client, console, pinRules: NewPINRules(keyMinimum: minimum))
            let method = action == .set ? ManagementMethod.setPin : ManagementMethod.changePin
            guard let changed = try await key.call(client, console, method, key.params, as: AuthenticatorEvent.self) else { return }
            console.print("\(action == .set ? "Set" : "Changed") the PIN of \(key.named(changed.authenticator)).")
        case .retries:
            key.answerPrompts(on: client, console)
            guard let retries = try await key.call(client, console, ManagementMethod.pinRetries, key.params, as: RetriesResult.self) else { return }
            // No count: the key has no PIN support, or no PIN set yet.
            var noCount = "no PIN support"
            if retries.pinRetries == nil, try await client.authenticatorInfo(key.id).authenticator.pin {
                noCount = "no PIN set (authctl pin set \(key.id))"
            }
            console.print(aligned([
                ("PIN", retries.pinRetries.map(PINPromptWording.attemptsLeft) ?? noCount),
                ("Fingerprint", retries.uvRetries.map(PINPromptWording.attemptsLeft) ?? "no fingerprint sensor"),
            ]))
        }
    }
}
