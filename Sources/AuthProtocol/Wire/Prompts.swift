/// What the prompts say about the operation (authkeyd-protocol(7), PROMPTS).
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
