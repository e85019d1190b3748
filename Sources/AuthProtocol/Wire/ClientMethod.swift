/// Every method a client may call, as one typed list: `hello`'s
/// capabilities, the documentation checks and the daemon's router all read
/// it, and the router switches over it, so a method added here without a
/// handler does not compile. The raw values are the wire names
/// (authkeyd-protocol(7), METHODS); `Method` and `ManagementMethod` name the same strings.
public enum ClientMethod: String, CaseIterable, Sendable {
    case hello = "hello"
    case listAuthenticators = "authenticators.list"
    case authenticatorInfo = "authenticators.info"
    case watchAuthenticators = "authenticators.watch"
    case selectAuthenticator = "authenticators.select"
    case cancelOperation = "operation.cancel"
    case createCredential = "credentials.create"
    case getCredential = "credentials.get"
    case listRegistrations = "registrations.list"
    case renameRegistration = "registrations.rename"
    case deleteRegistration = "registrations.delete"
    /// The session agent: this connection answers its user's prompts that
    /// their requesters cannot (authkeyd-protocol(7), "Agents").
    case registerAgent = "agent.register"
    case unregisterAgent = "agent.unregister"

    // Key management: admins only (allow-admins in authkeyd.conf(5)),
    // except listing the key's credentials (the daemon's policy).
    case setPin = "authenticators.setPin"
    case changePin = "authenticators.changePin"
    case pinRetries = "authenticators.pinRetries"
    case reset = "authenticators.reset"
    case listCredentials = "authenticators.credentials.list"
    case deleteCredential = "authenticators.credentials.delete"
    case updateCredentialUser = "authenticators.credentials.updateUser"
    case fingerprintSensor = "authenticators.fingerprints.info"
    case enrollFingerprint = "authenticators.fingerprints.enroll"
    case listFingerprints = "authenticators.fingerprints.list"
    case renameFingerprint = "authenticators.fingerprints.rename"
    case deleteFingerprint = "authenticators.fingerprints.delete"
    case setAlwaysUv = "authenticators.config.setAlwaysUv"
    case setMinPinLength = "authenticators.config.setMinPinLength"

    /// Whether the method manages keys (PIN, reset, on-key credentials,
    /// fingerprints, config). Which of them need the admin right is the
    /// daemon's policy (AuthDaemon's `needsAdminRight`).
    public var isManagement: Bool {
        switch self {
        case .hello, .listAuthenticators, .authenticatorInfo, .watchAuthenticators, .selectAuthenticator,
            .cancelOperation, .createCredential, .getCredential, .listRegistrations, .renameRegistration,
            .deleteRegistration, .registerAgent, .unregisterAgent:
            return false
        case .setPin, .changePin, .pinRetries, .reset, .listCredentials, .deleteCredential, .updateCredentialUser,
            .fingerprintSensor, .enrollFingerprint, .listFingerprints, .renameFingerprint, .deleteFingerprint,
            .setAlwaysUv, .setMinPinLength:
            return true
        }
    }
}

/// Every notification the daemon sends; raw values are the wire names.
public enum DaemonNotification: String, CaseIterable, Sendable {
    case authenticatorAdded = "authenticators.added"
    case authenticatorRemoved = "authenticators.removed"
    case authenticatorChanged = "authenticators.changed"
    case operationStatus = "operation.status"
    /// To an agent: a newer agent took its place.
    case agentReplaced = "agent.replaced"
    /// To an agent: a request it was shown was cancelled; drop its prompt.
    case operationCancelled = "operation.cancelled"
    /// To an agent: a request it was shown is over.
    case operationFinished = "operation.finished"
    /// To an agent, first on a connection the daemon made to its callback.
    case agentCallback = "agent.callback"
    case shuttingDown = "daemon.shuttingDown"
}
