import AuthProtocol

/// The words every PIN prompt a person reads shares (authctl at the
/// terminal and its agents, the PAM module): the key by the name the key
/// chooser shows (`Authenticator.displayName`), and the attempts left,
/// worded in one place so that no prompt drifts from another.
public enum PINPromptWording {
    /// "8 attempts left", "1 attempt left": a PIN's or a fingerprint's.
    public static func attemptsLeft(_ count: Int) -> String {
        "\(count) attempt\(count == 1 ? "" : "s") left"
    }

    /// " (8 attempts left)" after a prompt, or nothing when the key did not
    /// say.
    public static func retriesNote(_ retries: Int?) -> String {
        retries.map { " (\(attemptsLeft($0)))" } ?? ""
    }

    /// A terminal's question for the key's PIN: "PIN for Work YubiKey (8
    /// attempts left): ", or "Current PIN for …" for the PIN a change
    /// starts from (`current`, and `invalid` while `changing`). `shown`
    /// makes the key's name safe to print (a terminal escapes control
    /// characters).
    public static func question(
        _ reason: EnterPinPrompt.Reason, for key: Authenticator, retries: Int?, changing: Bool,
        shown: (String) -> String = { $0 }
    ) -> String {
        let which = reason == .current || (reason == .invalid && changing) ? "Current PIN" : "PIN"
        return "\(which) for \(shown(key.displayName))\(retriesNote(retries)): "
    }

    /// A terminal's question for a new PIN: "New PIN for Work YubiKey (at
    /// least 4 characters): ".
    public static func newPINQuestion(for key: Authenticator, minimumLength: Int, shown: (String) -> String = { $0 }) -> String {
        "New PIN for \(shown(key.displayName)) (at least \(minimumLength) characters): "
    }
}
