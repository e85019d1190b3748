import AuthProtocol

/// The members of a WebAuthn `PublicKeyCredential` JSON (Level 3
/// `toJSON()`) a client reads back: authctl for its summaries and
/// fido2-tools, the OpenSSH provider for what ssh stores.
public struct CredentialJSON: Decodable, Sendable {
    public struct Response: Decodable, Sendable {
        /// Absent when the request gave a `clientDataHash` instead of a challenge.
        public var clientDataJSON: Base64URLBytes?
        /// Registrations.
        public var attestationObject: Base64URLBytes?
        /// Authentications.
        public var authenticatorData: Base64URLBytes?
        public var signature: Base64URLBytes?
        public var userHandle: Base64URLBytes?
    }

    public var id: String
    public var rawId: Base64URLBytes
    public var response: Response

    /// The credential of a `credentials.create` / `credentials.get` result.
    public init(_ json: JSONValue) throws(AuthClientError) {
        do {
            self = try JSONValueDecoder().decode(Self.self, from: json)
        } catch {
            throw .protocolViolation("the credential in the result: \(error)")
        }
    }

    /// The registration's attestation object, decoded.
    public func attestationObject() throws(AuthClientError) -> AttestationObject {
        guard let bytes = response.attestationObject?.bytes, let object = AttestationObject(bytes) else {
            throw .protocolViolation("the result carries no readable attestationObject")
        }
        return object
    }

    /// The authentication's authenticator data and signature.
    public func assertion() throws(AuthClientError) -> (authenticatorData: [UInt8], signature: [UInt8]) {
        guard let data = response.authenticatorData?.bytes, let signature = response.signature?.bytes else {
            throw .protocolViolation("the result carries no authenticatorData and signature")
        }
        return (data, signature)
    }
}

extension CredentialResult {
    /// A `credentials.create` / `credentials.get` result as the daemon sent it.
    public init(_ json: JSONValue) throws(AuthClientError) {
        do {
            self = try JSONValueDecoder().decode(Self.self, from: json)
        } catch {
            throw .protocolViolation("the result: \(error)")
        }
    }
}
