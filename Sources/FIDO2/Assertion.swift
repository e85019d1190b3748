internal import CFido2

/// What `getAssertion` asks of a key.
public struct GetAssertionRequest: Sendable {
    public var relyingPartyID: String
    public var clientData: ClientData
    /// Credential ids the relying party accepts; empty asks for discoverable ones.
    public var allowList: [[UInt8]] = []
    public var userPresence: OptionRequest = .keyDefault
    public var userVerification: OptionRequest = .keyDefault
    /// hmac-secret salt: 32 bytes, or 64 for two outputs.
    public var hmacSalt: [UInt8]?
    public var largeBlobKey = false
    /// Ask for the credBlob stored at registration.
    public var credentialBlob = false

    public init(relyingPartyID: String, clientData: ClientData) {
        self.relyingPartyID = relyingPartyID
        self.clientData = clientData
    }
}

/// One assertion a key returned (several when it held several discoverable
/// credentials for the relying party).
public struct AssertionStatement: Sendable, Hashable {
    /// Authenticator data itself, as WebAuthn's `authenticatorData` holds it.
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    public var credentialID: [UInt8]
    public var userID: [UInt8]
    public var userName: String?
    public var userDisplayName: String?
    public var flags: AuthenticatorDataFlags
    public var signCount: UInt32
    /// The hmac-secret output, decrypted by libfido2: 32 or 64 bytes.
    public var hmacSecret: [UInt8]
    public var largeBlobKey: [UInt8]
    public var credentialBlob: [UInt8]
}

/// The result of `getAssertion`, or an assertion assembled for verification
/// (`fido_assert_t`). Immutable once made.
public final class Assertion: @unchecked Sendable {
    let handle: OpaquePointer

    init() throws(FIDO2Error) {
        FIDO2Library.ensureInitialized()
        guard let handle = fido_assert_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_assert_new") }
        self.handle = handle
    }

    deinit {
        var pointer: OpaquePointer? = handle
        fido_assert_free(&pointer)
    }

    convenience init(request: GetAssertionRequest) throws(FIDO2Error) {
        try self.init()
        try check(fido_assert_set_rp(handle, request.relyingPartyID), "fido_assert_set_rp")
        switch request.clientData {
        case .json(let json):
            try check(fido_assert_set_clientdata(handle, json, json.count), "fido_assert_set_clientdata")
        case .hash(let hash):
            try check(fido_assert_set_clientdata_hash(handle, hash, hash.count), "fido_assert_set_clientdata_hash")
        }
        for id in request.allowList {
            try check(fido_assert_allow_cred(handle, id, id.count), "fido_assert_allow_cred")
        }
        try check(fido_assert_set_up(handle, request.userPresence.cValue), "fido_assert_set_up")
        try check(fido_assert_set_uv(handle, request.userVerification.cValue), "fido_assert_set_uv")
        var extensions: Int32 = 0
        if let salt = request.hmacSalt {
            extensions |= FIDO_EXT_HMAC_SECRET
            try check(fido_assert_set_hmac_salt(handle, salt, salt.count), "fido_assert_set_hmac_salt")
        }
        if request.largeBlobKey { extensions |= FIDO_EXT_LARGEBLOB_KEY }
        if request.credentialBlob { extensions |= FIDO_EXT_CRED_BLOB }
        try check(fido_assert_set_extensions(handle, extensions), "fido_assert_set_extensions")
    }

    public var count: Int { fido_assert_count(handle) }

    public var statements: [AssertionStatement] { (0..<count).map(statement(at:)) }

    public func statement(at index: Int) -> AssertionStatement {
        AssertionStatement(
            authenticatorData: unwrapCBORByteString(
                bytes(fido_assert_authdata_ptr(handle, index), fido_assert_authdata_len(handle, index))),
            signature: bytes(fido_assert_sig_ptr(handle, index), fido_assert_sig_len(handle, index)),
            credentialID: bytes(fido_assert_id_ptr(handle, index), fido_assert_id_len(handle, index)),
            userID: bytes(fido_assert_user_id_ptr(handle, index), fido_assert_user_id_len(handle, index)),
            userName: fido_assert_user_name(handle, index).map { String(cString: $0) },
            userDisplayName: fido_assert_user_display_name(handle, index).map { String(cString: $0) },
            flags: AuthenticatorDataFlags(rawValue: fido_assert_flags(handle, index)),
            signCount: fido_assert_sigcount(handle, index),
            hmacSecret: bytes(fido_assert_hmac_secret_ptr(handle, index), fido_assert_hmac_secret_len(handle, index)),
            largeBlobKey: bytes(fido_assert_largeblob_key_ptr(handle, index), fido_assert_largeblob_key_len(handle, index)),
            credentialBlob: bytes(fido_assert_blob_ptr(handle, index), fido_assert_blob_len(handle, index)))
    }

    public var clientDataHash: [UInt8] {
        bytes(fido_assert_clientdata_hash_ptr(handle), fido_assert_clientdata_hash_len(handle))
    }

    /// Verifies statement `index` with an ES256 public key given as x‖y (64
    /// bytes) or 04‖x‖y (65 bytes), checking the signature and the rp id
    /// hash, and the up/uv flags the request demanded (`fido_assert_verify`).
    public func verify(at index: Int = 0, es256PublicKey publicKey: [UInt8]) throws(FIDO2Error) {
        guard let key = es256_pk_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "es256_pk_new") }
        var pointer: OpaquePointer? = key
        defer { es256_pk_free(&pointer) }
        try check(es256_pk_from_ptr(key, publicKey, publicKey.count), "es256_pk_from_ptr")
        try check(fido_assert_verify(handle, index, COSE_ES256, UnsafeRawPointer(key)), "fido_assert_verify")
    }

    /// Verifies statement `index` with a credential public key of any
    /// algorithm libfido2 checks, in the form `Credential.publicKey` gives
    /// it (`fido_assert_verify` with `es256_pk_t`, `eddsa_pk_t` or
    /// `rs256_pk_t`).
    public func verify(at index: Int = 0, publicKey: [UInt8], algorithm: COSEAlgorithm) throws(FIDO2Error) {
        switch algorithm {
        case .es256:
            try verify(at: index, es256PublicKey: publicKey)
        case .edDSA:
            guard let key = eddsa_pk_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "eddsa_pk_new") }
            var pointer: OpaquePointer? = key
            defer { eddsa_pk_free(&pointer) }
            try check(eddsa_pk_from_ptr(key, publicKey, publicKey.count), "eddsa_pk_from_ptr")
            try check(fido_assert_verify(handle, index, COSE_EDDSA, UnsafeRawPointer(key)), "fido_assert_verify")
        case .rs256:
            guard let key = rs256_pk_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "rs256_pk_new") }
            var pointer: OpaquePointer? = key
            defer { rs256_pk_free(&pointer) }
            try check(rs256_pk_from_ptr(key, publicKey, publicKey.count), "rs256_pk_from_ptr")
            try check(fido_assert_verify(handle, index, COSE_RS256, UnsafeRawPointer(key)), "fido_assert_verify")
        case .es384:
            throw FIDO2Error(code: FIDO_ERR_UNSUPPORTED_ALGORITHM, function: "fido_assert_verify")
        }
    }

    /// An assertion assembled from the parts a relying party received.
    public static func forVerification(
        request: GetAssertionRequest, authenticatorData: [UInt8], signature: [UInt8]
    ) throws(FIDO2Error) -> Assertion {
        let assertion = try Assertion(request: request)
        let handle = assertion.handle
        try check(fido_assert_set_count(handle, 1), "fido_assert_set_count")
        try check(
            fido_assert_set_authdata_raw(handle, 0, authenticatorData, authenticatorData.count),
            "fido_assert_set_authdata_raw")
        try check(fido_assert_set_sig(handle, 0, signature, signature.count), "fido_assert_set_sig")
        return assertion
    }
}

extension Device {
    /// Asks for assertions (`fido_dev_get_assert`). libfido2 fetches every
    /// statement the key offers (getNextAssertion) before returning.
    public func getAssertion(_ request: GetAssertionRequest, pin: PIN? = nil) throws(FIDO2Error) -> Assertion {
        let assertion = try Assertion(request: request)
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_dev_get_assert(handle, assertion.handle, pin), "fido_dev_get_assert")
            }
        }
        return assertion
    }
}
