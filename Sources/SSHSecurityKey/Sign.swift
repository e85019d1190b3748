import AuthClient
import AuthProtocol
import Crypto
import SystemKit

/// What `sk_sign` is asked.
public struct SignRequest: Sendable {
    public var algorithm: SSHKeyAlgorithm
    /// Hashed with SHA-256 into the clientDataHash, as OpenSSH's middleware does.
    public var data: [UInt8]
    public var application: String
    public var keyHandle: [UInt8]
    public var flags: SSHKeyFlags
    public var options: ProviderOptions

    public init(
        algorithm: SSHKeyAlgorithm, data: [UInt8], application: String, keyHandle: [UInt8], flags: SSHKeyFlags,
        options: ProviderOptions
    ) {
        self.algorithm = algorithm
        self.data = data
        self.application = application
        self.keyHandle = keyHandle
        self.flags = flags
        self.options = options
    }
}

/// What `sk_sign` returns (`struct sk_sign_response`).
public struct SignedData: Sendable {
    /// The authenticator data's flags byte: OpenSSH checks UP (and UV) in it.
    public var flags: UInt8
    public var counter: UInt32
    public var signature: SSHSignature
}

extension SecurityKeyProvider {
    /// `credentials.get` with the key handle as the allow list: the daemon
    /// finds the key that holds it (others queue behind, as for any client),
    /// and the key signs SHA-256(data) as the clientDataHash.
    public func sign(_ request: SignRequest, pin: SecretBytes?) async throws(ProviderError) -> SignedData {
        let session = try await BrokerSession.open(environment: environment, pin: pin)
        defer { session.close() }
        var params = GetParams(challenge: nil, rpId: request.application)
        params.clientDataHash = Base64URLBytes(SHA256.hash(request.data))
        params.allowCredentials = [CredentialDescriptor(id: Base64URLBytes(request.keyHandle))]
        // A PIN given is used, as OpenSSH's middleware uses it.
        params.userVerification = request.flags.contains(.userVerification) || pin != nil ? .required : .discouraged
        if !request.flags.contains(.userPresence) { params.userPresence = false }
        if let device = request.options.device { params.authenticator = try await session.chooseKey(device: device).id }
        let result: CredentialResult
        do {
            result = try await session.client.getCredential(params)
        } catch {
            throw session.failure(error, while: "signing")
        }
        let assertion: (authenticatorData: [UInt8], signature: [UInt8])
        do {
            assertion = try CredentialJSON(result.credential).assertion()
        } catch {
            throw ProviderError(error, while: "reading the signature")
        }
        guard let data = AuthenticatorData(assertion.authenticatorData) else {
            throw ProviderError(.general, "reading the signature: the authenticator data is shorter than 37 bytes")
        }
        return SignedData(
            flags: data.flags, counter: data.signCount,
            signature: try SSHSignature(keySignature: assertion.signature, algorithm: request.algorithm))
    }
}
