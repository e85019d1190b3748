import AuthProtocol

extension ClientMethod {
    /// Whether the method needs the admin right (`allow-admins`), checked
    /// by the router before the method runs. Every management method does
    /// but `authenticators.credentials.list`: reading the key's
    /// discoverable credentials changes nothing, the key itself asks for
    /// its PIN, and an ordinary user needs it for what they did before
    /// authkeyd held the key (`ssh-keygen -K`).
    var needsAdminRight: Bool {
        isManagement && self != .listCredentials
    }
}
