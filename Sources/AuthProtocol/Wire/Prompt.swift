/// The UI handshake: what the daemon asks the client while an operation
/// runs, shaped after Thales' `TGFFido2UiDelegate`. Every prompt carries the
/// operation it belongs to; every answer is `{action: proceed | cancel, …}`
/// (`PromptReply`).
///
/// A closed set: each side handles a prompt in a `switch` over these cases
/// with no `default`, so that a new prompt does not compile anywhere it is
/// not handled.
public enum Prompt: Sendable, Equatable {
    /// showAuthenticators: which key? Proceed with `{authenticator: ID}`, or
    /// `{touch: true}` to let the user touch the one they mean.
    case selectAuthenticator(SelectAuthenticatorPrompt)
    /// PIN entry. Proceed with `{pin}`.
    case enterPin(EnterPinPrompt)
    /// showTransactionDetails: proceed to sign exactly these details.
    case confirmTransaction(ConfirmTransactionPrompt)
    /// retrieveAuthenticatorDescription: proceed with `{friendlyName}`.
    case describeAuthenticator(DescribeAuthenticatorPrompt)
    /// The account chooser: which of the key's credentials for the relying
    /// party? Proceed with `{credential: ID}`.
    case selectCredential(SelectCredentialPrompt)

    /// Which prompt, without its params. Its name is the one `hello`'s `ui`
    /// lists (`enterPin`); the method the daemon sends is the name after
    /// `ui.` (`ui.enterPin`): one spelling, two uses.
    public enum Kind: String, CaseIterable, Codable, Sendable {
        case selectAuthenticator
        case enterPin
        case confirmTransaction
        case describeAuthenticator
        case selectCredential

        /// The JSON-RPC method: `ui.` and the name.
        public var method: String { "ui.\(rawValue)" }

        /// The prompt a method asks; nil for a method that is no prompt.
        public init?(method: String) {
            guard method.hasPrefix("ui.") else { return nil }
            self.init(rawValue: String(method.dropFirst(3)))
        }
    }

    public var kind: Kind {
        switch self {
        case .selectAuthenticator: return .selectAuthenticator
        case .enterPin: return .enterPin
        case .confirmTransaction: return .confirmTransaction
        case .describeAuthenticator: return .describeAuthenticator
        case .selectCredential: return .selectCredential
        }
    }

    /// The operation the prompt belongs to (an agent is shown it with its
    /// requester: `operation.requester`).
    public var operation: OperationInfo {
        get {
            switch self {
            case .selectAuthenticator(let prompt): return prompt.operation
            case .enterPin(let prompt): return prompt.operation
            case .confirmTransaction(let prompt): return prompt.operation
            case .describeAuthenticator(let prompt): return prompt.operation
            case .selectCredential(let prompt): return prompt.operation
            }
        }
        set {
            switch self {
            case .selectAuthenticator(var prompt): prompt.operation = newValue; self = .selectAuthenticator(prompt)
            case .enterPin(var prompt): prompt.operation = newValue; self = .enterPin(prompt)
            case .confirmTransaction(var prompt): prompt.operation = newValue; self = .confirmTransaction(prompt)
            case .describeAuthenticator(var prompt): prompt.operation = newValue; self = .describeAuthenticator(prompt)
            case .selectCredential(var prompt): prompt.operation = newValue; self = .selectCredential(prompt)
            }
        }
    }

    /// The request's params, as sent.
    public func params() throws -> JSONValue {
        let encoder = JSONValueEncoder()
        switch self {
        case .selectAuthenticator(let prompt): return try encoder.encode(prompt)
        case .enterPin(let prompt): return try encoder.encode(prompt)
        case .confirmTransaction(let prompt): return try encoder.encode(prompt)
        case .describeAuthenticator(let prompt): return try encoder.encode(prompt)
        case .selectCredential(let prompt): return try encoder.encode(prompt)
        }
    }

    /// The prompt a request from the daemon carries; nil for a method that
    /// is no prompt (a newer daemon's: its client declines it), and an
    /// error for params that do not fit the prompt.
    public init?(method: String, params: JSONValue) throws {
        guard let kind = Kind(method: method) else { return nil }
        let decoder = JSONValueDecoder()
        switch kind {
        case .selectAuthenticator: self = .selectAuthenticator(try decoder.decode(SelectAuthenticatorPrompt.self, from: params))
        case .enterPin: self = .enterPin(try decoder.decode(EnterPinPrompt.self, from: params))
        case .confirmTransaction: self = .confirmTransaction(try decoder.decode(ConfirmTransactionPrompt.self, from: params))
        case .describeAuthenticator: self = .describeAuthenticator(try decoder.decode(DescribeAuthenticatorPrompt.self, from: params))
        case .selectCredential: self = .selectCredential(try decoder.decode(SelectCredentialPrompt.self, from: params))
        }
    }
}
