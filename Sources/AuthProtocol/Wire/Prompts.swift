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

/// What the prompts say about the operation (PROTOCOL.md "OperationInfo").
public struct OperationInfo: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case registration
        case authentication
        /// PIN, reset, credentials, fingerprints, config: `action` says which.
        case management
    }

    public var type: Kind
    /// The relying party; absent for management.
    public var rpId: String?
    /// For management: the method, such as `authenticators.setPin`.
    public var action: String?
    public var rpName: String?
    public var userName: String?
    public var userDisplayName: String?
    /// The id of the client request this prompt belongs to.
    public var request: JSONValue
    /// The origin the client declared.
    public var origin: String?
    /// Who asked: in prompts and statuses sent to an agent only. There,
    /// `request` is the daemon's name for the request (`"op-N"`), unique
    /// across requesters.
    public var requester: Requester?

    public init(
        type: Kind, rpId: String?, rpName: String? = nil, userName: String? = nil, userDisplayName: String? = nil,
        request: JSONValue, origin: String? = nil, action: String? = nil, requester: Requester? = nil
    ) {
        self.requester = requester
        self.type = type
        self.rpId = rpId
        self.action = action
        self.rpName = rpName
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.request = request
        self.origin = origin
    }
}

public struct SelectAuthenticatorPrompt: Codable, Sendable, Equatable {
    public var operation: OperationInfo
    /// The keys to choose from, labelled with their registration names when
    /// they hold a matching credential.
    public var authenticators: [Authenticator]
    public init(operation: OperationInfo, authenticators: [Authenticator]) {
        self.operation = operation
        self.authenticators = authenticators
    }
}

public struct EnterPinPrompt: Codable, Sendable, Equatable {
    public enum Reason: String, Codable, Sendable {
        /// The key needs its PIN.
        case required
        /// The last PIN was wrong.
        case invalid
        /// The PIN the key has now, before a change.
        case current
        /// A new PIN (setting or changing it); a terminal asks for it twice.
        case new
        /// The key refused the new PIN (shorter than `minLength`, longer
        /// than 63 bytes, or the same as before); ask again.
        case newRejected
    }

    public var operation: OperationInfo
    public var authenticator: Authenticator
    public var reason: Reason
    /// PIN attempts left before the PIN blocks.
    public var retries: Int?
    /// The key's minimum PIN length.
    public var minLength: Int?

    public init(operation: OperationInfo, authenticator: Authenticator, reason: Reason, retries: Int?, minLength: Int?) {
        self.operation = operation
        self.authenticator = authenticator
        self.reason = reason
        self.retries = retries
        self.minLength = minLength
    }
}

public struct ConfirmTransactionPrompt: Codable, Sendable, Equatable {
    public var operation: OperationInfo
    public var transaction: Transaction
    public init(operation: OperationInfo, transaction: Transaction) {
        self.operation = operation
        self.transaction = transaction
    }
}

public struct DescribeAuthenticatorPrompt: Codable, Sendable, Equatable {
    public var operation: OperationInfo
    public var authenticator: Authenticator
    /// The new credential, base64url.
    public var credentialId: String
    /// A name the daemon suggests (the key's current name, or its product).
    public var suggestion: String?
    public init(operation: OperationInfo, authenticator: Authenticator, credentialId: String, suggestion: String?) {
        self.operation = operation
        self.authenticator = authenticator
        self.credentialId = credentialId
        self.suggestion = suggestion
    }
}

/// The answer to every prompt.
public struct PromptReply: Codable, Sendable, Equatable {
    public enum Action: String, Codable, Sendable {
        case proceed
        case cancel
    }

    public var action: Action
    public var authenticator: String?
    public var touch: Bool?
    public var pin: String?
    public var friendlyName: String?
    /// `ui.selectCredential`: the id of the credential chosen, base64url.
    public var credential: String?

    public init(
        action: Action, authenticator: String? = nil, touch: Bool? = nil, pin: String? = nil, friendlyName: String? = nil,
        credential: String? = nil
    ) {
        self.action = action
        self.authenticator = authenticator
        self.touch = touch
        self.pin = pin
        self.friendlyName = friendlyName
        self.credential = credential
    }

    public static let proceed = PromptReply(action: .proceed)
    public static let cancel = PromptReply(action: .cancel)
}
