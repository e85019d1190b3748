import AuthClient
import AuthProtocol
import Crypto
import SystemKit

/// What `sk_enroll` is asked.
public struct EnrollRequest: Sendable {
    public var algorithm: SSHKeyAlgorithm
    /// Hashed with SHA-256 into the clientDataHash, as OpenSSH's middleware does.
    public var challenge: [UInt8]
    /// The relying party id: `ssh:` unless `-O application=`.
    public var application: String
    public var flags: SSHKeyFlags
    public var options: ProviderOptions

    public init(algorithm: SSHKeyAlgorithm, challenge: [UInt8], application: String, flags: SSHKeyFlags, options: ProviderOptions) {
        self.algorithm = algorithm
        self.challenge = challenge
        self.application = application
        self.flags = flags
        self.options = options
    }
}

/// What `sk_enroll` returns (`struct sk_enroll_response`).
public struct EnrolledKey: Sendable {
    /// The flags as requested: OpenSSH stores them in the key file.
    public var flags: SSHKeyFlags
    public var publicKey: [UInt8]
    /// The credential id.
    public var keyHandle: [UInt8]
    /// The attestation statement's signature and certificate (`-O write-attestation`).
    public var attestationSignature: [UInt8]
    public var attestationCertificate: [UInt8]
    public var authenticatorData: [UInt8]
}

extension SecurityKeyProvider {
    /// `credentials.create` as OpenSSH's middleware makes the credential:
    /// user "openssh" with the `user` option's id, credProtect for resident
    /// and verify-required keys (refused by a key that cannot protect them),
    /// and the attestation as the key gave it.
    public func enroll(_ request: EnrollRequest, pin: SecretBytes?) async throws(ProviderError) -> EnrolledKey {
        let userID = try request.options.userID()
        let session = try await BrokerSession.open(environment: environment, pin: pin)
        defer { session.close() }
        let key = try await session.chooseKey(device: request.options.device)
        let resident = request.flags.contains(.resident)
        if resident, !request.flags.contains(.force) {
            try await refuseExistingResidentKey(
                on: key, application: request.application, userID: userID, verifying: pin != nil, session: session)
        }
        let result: CredentialResult
        do {
            result = try await session.client.createCredential(
                Self.createParams(request, userID: userID, key: key))
        } catch {
            throw session.failure(error, while: "registering on \(key.displayName)")
        }
        return try Self.enrolledKey(from: result, request: request)
    }

    static func createParams(_ request: EnrollRequest, userID: [UInt8], key: Authenticator) -> CreateParams {
        var params = CreateParams(
            rp: .init(id: request.application, name: request.application),
            user: .init(id: Base64URLBytes(userID), name: "openssh", displayName: "openssh"),
            challenge: nil, pubKeyCredParams: [.init(alg: request.algorithm.coseAlgorithm)])
        params.clientDataHash = Base64URLBytes(SHA256.hash(request.challenge))
        params.authenticator = key.id
        params.attestation = .direct
        let resident = request.flags.contains(.resident), verified = request.flags.contains(.userVerification)
        params.authenticatorSelection = .init(
            residentKey: resident ? .required : .discouraged, requireResidentKey: resident,
            userVerification: verified ? .required : .discouraged)
        if resident || verified {
            // OpenSSH's choice: a verify-required key needs UV for every
            // use; a resident one is not found without UV or its id.
            var extensions = CreateExtensions()
            extensions.credentialProtectionPolicy = verified ? "userVerificationRequired" : "userVerificationOptionalWithCredentialIDList"
            extensions.enforceCredentialProtectionPolicy = true
            params.extensions = extensions
        }
        return params
    }

    static func enrolledKey(from result: CredentialResult, request: EnrollRequest) throws(ProviderError) -> EnrolledKey {
        let credential: CredentialJSON, attestation: AttestationObject
        do {
            credential = try CredentialJSON(result.credential)
            attestation = try credential.attestationObject()
        } catch {
            throw ProviderError(error, while: "reading the registration")
        }
        guard let attested = AuthenticatorData(attestation.authenticatorData)?.attestedCredential else {
            throw ProviderError(.general, "reading the registration: its authenticator data holds no credential")
        }
        return EnrolledKey(
            flags: request.flags,
            publicKey: try SSHPublicKey.bytes(fromCOSE: attested.publicKey, algorithm: request.algorithm),
            keyHandle: credential.rawId.bytes, attestationSignature: attestation.signature,
            attestationCertificate: attestation.certificate ?? [], authenticatorData: attestation.authenticatorData)
    }

    /// `SSH_SK_ERR_CREDENTIAL_EXISTS` when the key already holds a resident
    /// credential for this application and user: enrolling again would
    /// replace it on the key, and ssh-keygen asks first (then calls with
    /// `SSH_SK_FORCE_OPERATION`). Looked up as OpenSSH's middleware does,
    /// with an assertion that needs no touch over a zero hash; a key that
    /// finds none without the PIN (a PIN-protected key) is taken at its word.
    func refuseExistingResidentKey(
        on key: Authenticator, application: String, userID: [UInt8], verifying: Bool, session: BrokerSession
    ) async throws(ProviderError) {
        var params = GetParams(challenge: nil, rpId: application)
        params.clientDataHash = Base64URLBytes([UInt8](repeating: 0, count: SHA256.byteCount))
        params.authenticator = key.id
        params.userPresence = false
        params.userVerification = verifying ? .required : .discouraged
        session.prompts.lookForUser(userID)
        let found: Result<CredentialResult, AuthClientError>
        do {
            found = .success(try await session.client.getCredential(params))
        } catch {
            found = .failure(error)
        }
        switch found {
        case .success(let result):
            // One credential: the key answered with it, no chooser asked.
            let handle = try? CredentialJSON(result.credential).response.userHandle?.bytes
            if handle == userID { throw ProviderError(.credentialExists, nil) }
        case .failure(let error):
            // Several: the chooser saw them, noted a match and cancelled.
            if session.prompts.foundUser { throw ProviderError(.credentialExists, nil) }
            if session.prompts.pinOutcome == .none, error.reason == .noCredentials || error.reason == .cancelled { return }
            throw session.failure(error, while: "looking for an existing resident key on \(key.displayName)")
        }
    }
}
