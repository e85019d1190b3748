/// `ui.selectCredential`, the account chooser: a `credentials.get` without
/// an allow list found several discoverable credentials of the relying
/// party on the key. The key has signed with each of them already (CTAP's
/// getNextAssertion), so answering touches the key no more.
public struct SelectCredentialPrompt: Codable, Sendable, Equatable {
    /// One credential to choose.
    public struct Credential: Codable, Sendable, Equatable {
        /// The credential id, base64url: what `{credential}` answers with.
        public var id: String
        /// The account. `name` and `displayName` are the key's where it gave
        /// them (keys give them only after user verification), else those
        /// the calling user registered the credential with; absent when
        /// neither is known.
        public var user: StoredCredentials.User
        /// The daemon's record of the credential, when the calling user has one.
        public var registration: Registration?

        public init(id: String, user: StoredCredentials.User, registration: Registration?) {
            self.id = id
            self.user = user
            self.registration = registration
        }
    }

    public var operation: OperationInfo
    /// The key that holds them.
    public var authenticator: Authenticator
    /// Newest first, as the key lists them.
    public var credentials: [Credential]

    public init(operation: OperationInfo, authenticator: Authenticator, credentials: [Credential]) {
        self.operation = operation
        self.authenticator = authenticator
        self.credentials = credentials
    }
}

extension Prompt {
    /// A prompt's name in `hello`'s `ui` list: its method without `ui.`
    /// (`selectCredential` for `ui.selectCredential`).
    public static func name(of prompt: String) -> String {
        prompt.hasPrefix("ui.") ? String(prompt.dropFirst(3)) : prompt
    }

    /// The prompt a name of `hello`'s `ui` list stands for; nil for a name
    /// that is no prompt's.
    public static func named(_ name: String) -> String? {
        all.first { self.name(of: $0) == name }
    }
}
