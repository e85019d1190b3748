import AuthClient
import AuthProtocol
import CBOR
import SystemKit

/// One key of `sk_load_resident_keys` (`struct sk_resident_key`).
public struct ResidentKey: Sendable {
    public var algorithm: SSHKeyAlgorithm
    /// The relying party: `ssh:` or `ssh:` and a name.
    public var application: String
    public var publicKey: [UInt8]
    public var keyHandle: [UInt8]
    public var userID: [UInt8]
    /// `SSH_SK_USER_VERIFICATION_REQD` for a credential the key will not
    /// use without verification, when the key has no built-in verification
    /// (so ssh must ask the PIN), as OpenSSH's middleware reports it.
    public var flags: SSHKeyFlags
}

extension SecurityKeyProvider {
    /// The key's discoverable credentials whose relying party starts with
    /// `ssh:` (credential management through the daemon, with the PIN ssh
    /// passed). Credentials of a type OpenSSH has no `-sk` key for are left
    /// out, with a note on stderr.
    ///
    /// The key is the one `device` names, else the daemon's choice among the
    /// keys that can list their credentials (a PIN set): the only one
    /// without a touch, else the one touched. A key without a PIN, which
    /// cannot, is never the one that answers a touch first.
    public func loadResidentKeys(options: ProviderOptions, pin: SecretBytes?) async throws(ProviderError) -> [ResidentKey] {
        let session = try await BrokerSession.open(environment: environment, pin: pin)
        defer { session.close() }
        var named: Authenticator?
        if let device = options.device { named = try await session.namedKey(device) }
        let listing: StoredCredentials
        do {
            listing = try await session.client.storedCredentials(on: named?.id)
        } catch {
            throw session.failure(error, while: "reading the resident keys\(named.map { " of \($0.displayName)" } ?? "")")
        }
        let key = listing.authenticator ?? named
        var keys: [ResidentKey] = []
        for party in listing.relyingParties where party.id.lowercased().hasPrefix("ssh:") {
            for credential in party.credentials {
                guard let cose = credential.publicKeyAlgorithm, let algorithm = SSHKeyAlgorithm(coseAlgorithm: cose),
                      let encoded = credential.publicKey?.bytes, let coseKey = try? CBOR.decode(encoded),
                      let keyHandle = Base64URL.decode(credential.credentialId)
                else {
                    reportSkipped(credential, of: party.id)
                    continue
                }
                let verificationRequired = credential.credProtect == 3 && key?.uv != true
                keys.append(ResidentKey(
                    algorithm: algorithm, application: party.id,
                    publicKey: try SSHPublicKey.bytes(fromCOSE: coseKey, algorithm: algorithm), keyHandle: keyHandle,
                    userID: credential.user.id.bytes, flags: verificationRequired ? .userVerification : []))
            }
        }
        return keys
    }

    private func reportSkipped(_ credential: StoredCredentials.Credential, of application: String) {
        let algorithm = credential.publicKeyAlgorithm.map { "COSE algorithm \($0)" } ?? "an unknown algorithm"
        writeToStandardError("authkeyd-sk: skipped a resident key of \(application) with \(algorithm): OpenSSH has no key type for it\n")
    }
}
