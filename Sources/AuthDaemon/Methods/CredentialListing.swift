import AuthProtocol

/// Which keys can list their discoverable credentials, for a listing that
/// names no key (`ssh-keygen -K` through the provider): CTAP 2.1's
/// credential management needs the key to offer it (`credMgmt`) and a
/// pinUvAuthToken with the `cm` permission, which a key without a PIN
/// cannot give. Offering another key would ask for a touch only to fail
/// with "the key needs a PIN for this".
enum CredentialListing {
    static func canList(_ key: RegisteredKey) -> Bool {
        key.info.supports.credentialManagement && key.info.supports.clientPIN.isOn
    }

    /// Why none of `keys` (the present ones, or the one chosen) can list
    /// its credentials: those that offer credential management have no PIN
    /// (named, so the user knows which to set), or none offers it.
    static func noKeyCanList(_ keys: [RegisteredKey]) -> RPCError {
        let withoutPIN = keys.filter(\.info.supports.credentialManagement)
        guard !withoutPIN.isEmpty else {
            return RPCError(
                .unsupported,
                "listing the credentials on the keys: no key present can list its credentials: none offers credential management (CTAP 2.1 credMgmt)")
        }
        let named = withoutPIN.map { "\($0.id) \"\($0.product)\"" }.joined(separator: ", ")
        return RPCError(
            .unsupported,
            "listing the credentials on the keys: no key present can list its credentials: credential management needs a PIN, and \(named) \(withoutPIN.count == 1 ? "has" : "have") none; set one (authctl pin set \(withoutPIN[0].id))")
    }
}
