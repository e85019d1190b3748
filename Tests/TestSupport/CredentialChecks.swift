import AuthProtocol
import Crypto

extension WebAuthnFixtures {
    /// Whether a WebAuthn credential (the `credential` of a create or get
    /// result) was made for `rpID`: its authenticatorData begins with
    /// SHA-256 of the id. A reply meant for another request would not.
    public static func isMade(for rpID: String, _ credential: JSONValue) -> Bool {
        guard let data = credential["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode) else { return false }
        return Array(data.prefix(32)) == SHA256.hash(Array(rpID.utf8))
    }

    /// The credential's id (`rawId`), decoded.
    public static func credentialID(of credential: JSONValue) -> [UInt8]? {
        credential["rawId"]?.stringValue.flatMap(Base64URL.decode)
    }
}
