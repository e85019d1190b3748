import AuthClient
import AuthProtocol

/// The members of a WebAuthn `PublicKeyCredential` JSON (Level 3
/// `toJSON()`) that authctl reads back: for its summaries and fido2-tools.
struct CredentialJSON: Decodable {
    struct Response: Decodable {
        var clientDataJSON: Base64URLBytes
        /// Registrations.
        var attestationObject: Base64URLBytes?
        /// Authentications.
        var authenticatorData: Base64URLBytes?
        var signature: Base64URLBytes?
        var userHandle: Base64URLBytes?
    }

    var id: String
    var rawId: Base64URLBytes
    var response: Response

    /// The credential of a `credentials.create` / `credentials.get` result.
    init(_ json: JSONValue) throws(AuthClientError) {
        do {
            self = try JSONValueDecoder().decode(Self.self, from: json)
        } catch {
            throw .protocolViolation("the credential in the result: \(error)")
        }
    }

    /// The registration's attestation object, decoded.
    func attestationObject() throws(AuthClientError) -> AttestationObject {
        guard let bytes = response.attestationObject?.bytes, let object = AttestationObject(bytes) else {
            throw .protocolViolation("the result carries no readable attestationObject")
        }
        return object
    }

    /// The authentication's authenticator data and signature.
    func assertion() throws(AuthClientError) -> (authenticatorData: [UInt8], signature: [UInt8]) {
        guard let data = response.authenticatorData?.bytes, let signature = response.signature?.bytes else {
            throw .protocolViolation("the result carries no authenticatorData and signature")
        }
        return (data, signature)
    }
}

extension CredentialResult {
    /// A `credentials.create` / `credentials.get` result as the daemon sent it.
    init(_ json: JSONValue) throws(AuthClientError) {
        do {
            self = try JSONValueDecoder().decode(Self.self, from: json)
        } catch {
            throw .protocolViolation("the result: \(error)")
        }
    }
}
