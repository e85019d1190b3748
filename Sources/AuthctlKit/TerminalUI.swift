import AuthClient
import AuthProtocol

/// The daemon's prompts as questions at the terminal. Each returns nil
/// (or false) for "cancel": Ctrl-D, an empty answer where nothing else
/// makes sense, or "q".
extension Terminal {
    func chooseAuthenticator(_ keys: [Authenticator], operation: OperationInfo) -> AuthenticatorChoice? {
        var menu = "Which security key\(operation.rpId.map { " for \(printable($0))" } ?? "")?\n"
        for (number, key) in keys.enumerated() {
            let name = key.name.map { "\"\(printable($0))\"  " } ?? ""
            menu += "  \(number + 1)) \(printable(key.id))  \(name)\(printable(key.product)) (\(key.transport.rawValue))\n"
        }
        menu += "  t) touch the key you mean\n"
        say(menu)
        while let answer = ask("Choice [1-\(keys.count), t; empty or q cancels]: ")?.trimmed {
            switch answer.lowercased() {
            case "", "q": return nil
            case "t": return .touch
            default:
                if let number = Int(answer), keys.indices.contains(number - 1) { return .authenticator(id: keys[number - 1].id) }
                say("Type a number from 1 to \(keys.count), t, or q.\n")
            }
        }
        return nil
    }

    /// The PIN a prompt asks for, worded by its reason, the key named as
    /// the chooser names it (`PINPromptWording`). `refusal` says why the
    /// key refused the last new PIN (`newRejected`).
    func enterPIN(
        for key: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?, rules: NewPINRules,
        refusal: String?
    ) -> String? {
        switch reason {
        case .required, .current, .invalid:
            if reason == .invalid { say("Wrong PIN.\n") }
            // A change asks again for the PIN the key has now: the question says which.
            let changing = operation.action == ManagementMethod.changePin
            return askPIN(PINPromptWording.question(reason, for: key, retries: retries, changing: changing, shown: printable))
        case .new:
            return askNewPIN(for: key, rules)
        case .newRejected:
            say("The key refused that PIN (\(refusal ?? "it breaks the key's own rules")); choose another.\n")
            return askNewPIN(for: key, rules)
        }
    }

    /// A PIN typed with echo off; nil at Ctrl-D or an empty line.
    private func askPIN(_ question: String) -> String? {
        guard let pin = askSecret(question), !pin.isEmpty else { return nil }
        return pin
    }

    /// A new PIN, typed twice: a slip of the finger in a PIN nobody sees
    /// would lock its owner out. A length the key cannot take is asked
    /// again at once, with the reason.
    private func askNewPIN(for key: Authenticator, _ rules: NewPINRules) -> String? {
        let question = PINPromptWording.newPINQuestion(for: key, minimumLength: rules.minimumLength, shown: printable)
        while true {
            guard let pin = askPIN(question) else { return nil }
            if let problem = rules.problem(with: pin) {
                say("That PIN is \(problem); choose another.\n")
                continue
            }
            guard let again = askSecret("New PIN again: ") else { return nil }
            if again == pin { return pin }
            say("The two PINs differ; try again.\n")
        }
    }

    func confirm(_ transaction: Transaction, operation: OperationInfo) -> Bool {
        var text = "\(printable(operation.rpId ?? "authkeyd")) asks you to sign:\n"
        for (label, value) in transaction.details {
            text += "  \(printable(label)): \(printable(value.stringValue ?? ""))\n"
        }
        say(text)
        guard let answer = ask("Sign this? [y/N] ")?.trimmed.lowercased() else { return false }
        return answer == "y" || answer == "yes"
    }

    /// The name for a key just registered; the suggestion when the answer
    /// is empty, and nil (leave it unnamed) when there is neither.
    func nameAuthenticator(suggestion: String?) -> String? {
        let offered = suggestion.map { " [\(printable($0))]" } ?? ""
        guard let answer = ask("Name this security key\(offered): ")?.trimmed else { return nil }
        return answer.isEmpty ? suggestion : answer
    }
}

/// Text from the daemon (and so from a relying party) with its control
/// and text-direction characters shown as escapes: an RP id or a
/// transaction detail must not be able to move the cursor, or reorder what
/// the user reads, in what they are asked to confirm.
func printable(_ text: String) -> String {
    text.unicodeScalars.map { scalar -> String in
        switch scalar.value {
        case 0..<0x20, 0x7F..<0xA0, 0x200E...0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return "\\u{\(String(scalar.value, radix: 16))}"
        default: return String(scalar)
        }
    }.joined()
}

extension String {
    var trimmed: String {
        var scalars = Substring(self)
        while scalars.first?.isWhitespace == true { scalars.removeFirst() }
        while scalars.last?.isWhitespace == true { scalars.removeLast() }
        return String(scalars)
    }
}
