internal import CFido2

/// What `makeCredential` asks of a key.
public struct MakeCredentialRequest: Sendable {
    public var clientData: ClientData
    public var relyingParty: RelyingParty
    public var user: UserEntity
    public var algorithm: COSEAlgorithm = .es256
    /// A discoverable ("resident") credential.
    public var residentKey: OptionRequest = .keyDefault
    public var userVerification: OptionRequest = .keyDefault
    /// Credential ids the key must not already hold for this relying party.
    public var excludeList: [[UInt8]] = []
    public var hmacSecret = false
    public var credentialProtection: CredentialProtection?
    /// The credBlob extension: bytes stored with the credential.
    public var credentialBlob: [UInt8]?
    /// Ask the key to report its minimum PIN length (minPinLength extension).
    public var minPINLength = false
    public var largeBlobKey = false

    public init(clientData: ClientData, relyingParty: RelyingParty, user: UserEntity) {
        self.clientData = clientData
        self.relyingParty = relyingParty
        self.user = user
    }
}

/// A credential: the result of `makeCredential`, or one assembled from its
/// parts for verification (`fido_cred_t`).
///
/// Immutable once made, so it may cross threads.
public final class Credential: @unchecked Sendable {
    let handle: OpaquePointer

    init() throws(FIDO2Error) {
        FIDO2Library.ensureInitialized()
        guard let handle = fido_cred_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_cred_new") }
        self.handle = handle
    }

    deinit {
        var pointer: OpaquePointer? = handle
        fido_cred_free(&pointer)
    }

    /// Sets what a request or a verification needs (type, client data, rp,
    /// user, options, extensions, exclude list).
    convenience init(request: MakeCredentialRequest) throws(FIDO2Error) {
        try self.init()
        try check(fido_cred_set_type(handle, request.algorithm.rawValue), "fido_cred_set_type")
        try setClientData(request.clientData)
        try check(fido_cred_set_rp(handle, request.relyingParty.id, request.relyingParty.name), "fido_cred_set_rp")
        let user = request.user
        try check(
            fido_cred_set_user(handle, user.id, user.id.count, user.name, user.displayName, user.icon),
            "fido_cred_set_user")
        try check(fido_cred_set_rk(handle, request.residentKey.cValue), "fido_cred_set_rk")
        try check(fido_cred_set_uv(handle, request.userVerification.cValue), "fido_cred_set_uv")
        for id in request.excludeList {
            try check(fido_cred_exclude(handle, id, id.count), "fido_cred_exclude")
        }
        var extensions: Int32 = 0
        if request.hmacSecret { extensions |= FIDO_EXT_HMAC_SECRET }
        if request.minPINLength { extensions |= FIDO_EXT_MINPINLEN }
        if request.largeBlobKey { extensions |= FIDO_EXT_LARGEBLOB_KEY }
        if let protection = request.credentialProtection {
            try check(fido_cred_set_prot(handle, protection.rawValue), "fido_cred_set_prot")
        }
        if let blob = request.credentialBlob {
            try check(fido_cred_set_blob(handle, blob, blob.count), "fido_cred_set_blob")
        }
        // Adds to the bits credProtect and credBlob set; zero would clear them.
        if extensions != 0 {
            try check(fido_cred_set_extensions(handle, extensions), "fido_cred_set_extensions")
        }
    }

    private func setClientData(_ clientData: ClientData) throws(FIDO2Error) {
        switch clientData {
        case .json(let json):
            try check(fido_cred_set_clientdata(handle, json, json.count), "fido_cred_set_clientdata")
        case .hash(let hash):
            try check(fido_cred_set_clientdata_hash(handle, hash, hash.count), "fido_cred_set_clientdata_hash")
        }
    }

    // MARK: Results

    /// The attestation statement format: `packed`, `none`, `fido-u2f`, `tpm`.
    public var format: String { fido_cred_fmt(handle).map { String(cString: $0) } ?? "" }
    /// Authenticator data as the key sent it: a CBOR byte string.
    public var authenticatorDataCBOR: [UInt8] { bytes(fido_cred_authdata_ptr(handle), fido_cred_authdata_len(handle)) }
    /// Authenticator data itself, as WebAuthn's attestation object holds it.
    public var authenticatorData: [UInt8] { bytes(fido_cred_authdata_raw_ptr(handle), fido_cred_authdata_raw_len(handle)) }
    public var credentialID: [UInt8] { bytes(fido_cred_id_ptr(handle), fido_cred_id_len(handle)) }
    /// The public key as libfido2 holds it: for ES256, x and y, 32 bytes
    /// each; for EdDSA, the 32-byte Ed25519 key; for RS256, the 256-byte
    /// modulus and the 3-byte exponent.
    public var publicKey: [UInt8] { bytes(fido_cred_pubkey_ptr(handle), fido_cred_pubkey_len(handle)) }
    /// The first certificate of the attestation chain (DER), if any.
    public var attestationCertificate: [UInt8] { bytes(fido_cred_x5c_ptr(handle), fido_cred_x5c_len(handle)) }
    public var attestationSignature: [UInt8] { bytes(fido_cred_sig_ptr(handle), fido_cred_sig_len(handle)) }
    /// The attestation statement, CBOR-encoded, as the key sent it.
    public var attestationStatementCBOR: [UInt8] { bytes(fido_cred_attstmt_ptr(handle), fido_cred_attstmt_len(handle)) }
    public var aaguid: [UInt8] { bytes(fido_cred_aaguid_ptr(handle), fido_cred_aaguid_len(handle)) }
    public var clientDataHash: [UInt8] {
        bytes(fido_cred_clientdata_hash_ptr(handle), fido_cred_clientdata_hash_len(handle))
    }
    public var flags: AuthenticatorDataFlags { AuthenticatorDataFlags(rawValue: fido_cred_flags(handle)) }
    public var signCount: UInt32 { fido_cred_sigcount(handle) }
    /// The COSE algorithm of the credential key (`fido_cred_type`): the
    /// type the request set, which the key's attested credential data
    /// must match.
    public var algorithm: Int32 { fido_cred_type(handle) }
    /// `algorithm` as a known algorithm, or nil.
    public var coseAlgorithm: COSEAlgorithm? { COSEAlgorithm(rawValue: fido_cred_type(handle)) }
    /// The credProtect level the key reported, or nil.
    public var protection: CredentialProtection? { CredentialProtection(rawValue: fido_cred_prot(handle)) }
    public var largeBlobKey: [UInt8] { bytes(fido_cred_largeblob_key_ptr(handle), fido_cred_largeblob_key_len(handle)) }
    /// The minimum PIN length the key reported through the minPinLength
    /// extension, or nil. Read from authenticator data: libfido2 1.12's
    /// `fido_cred_pin_minlen` returns only what was asked for.
    public var minPINLength: Int? {
        (try? ParsedAuthenticatorData(authenticatorData))?.extensions["minPinLength"]?.intValue
    }
    public var relyingPartyID: String { fido_cred_rp_id(handle).map { String(cString: $0) } ?? "" }
    public var relyingPartyName: String? { fido_cred_rp_name(handle).map { String(cString: $0) } }
    public var userID: [UInt8] { bytes(fido_cred_user_id_ptr(handle), fido_cred_user_id_len(handle)) }
    public var userName: String? { fido_cred_user_name(handle).map { String(cString: $0) } }
    public var userDisplayName: String? { fido_cred_display_name(handle).map { String(cString: $0) } }

    // MARK: Verification

    /// Verifies the attestation signature with the certificate in x5c, and
    /// the authenticator data against the request (`fido_cred_verify`).
    public func verify() throws(FIDO2Error) {
        try check(fido_cred_verify(handle), "fido_cred_verify")
    }

    /// Verifies a self-attestation: signed by the credential's own key
    /// (`fido_cred_verify_self`).
    public func verifySelf() throws(FIDO2Error) {
        try check(fido_cred_verify_self(handle), "fido_cred_verify_self")
    }

    /// A credential assembled from the parts a relying party received, to
    /// check them with `verify()` or `verifySelf()`.
    public static func forVerification(
        request: MakeCredentialRequest, format: String, authenticatorData: [UInt8],
        attestationCertificate: [UInt8]?, signature: [UInt8]
    ) throws(FIDO2Error) -> Credential {
        let credential = try Credential(request: request)
        let handle = credential.handle
        try check(fido_cred_set_authdata_raw(handle, authenticatorData, authenticatorData.count), "fido_cred_set_authdata_raw")
        if let certificate = attestationCertificate {
            try check(fido_cred_set_x509(handle, certificate, certificate.count), "fido_cred_set_x509")
        }
        try check(fido_cred_set_sig(handle, signature, signature.count), "fido_cred_set_sig")
        try check(fido_cred_set_fmt(handle, format), "fido_cred_set_fmt")
        return credential
    }
}

extension Device {
    /// Registers a new credential (`fido_dev_make_cred`). With a PIN, libfido2
    /// obtains a pinUvAuthToken first; without one, a key that requires
    /// verification answers `FIDO2Error.pinRequired` or uses built-in UV.
    public func makeCredential(_ request: MakeCredentialRequest, pin: PIN? = nil) throws(FIDO2Error) -> Credential {
        let credential = try Credential(request: request)
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_dev_make_cred(handle, credential.handle, pin), "fido_dev_make_cred")
            }
        }
        return credential
    }
}
