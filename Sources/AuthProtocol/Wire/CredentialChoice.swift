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
