internal import CCrypto

/// NIST P-256 keys: ES256 credentials, attestation keys, and the ECDH of
/// CTAP's PIN/UV auth protocols.
public enum P256 {
    public static let scalarByteCount = 32
    public static let coordinateByteCount = 32

    /// A P-256 private key. The wrapped `EVP_PKEY` is never modified after
    /// creation, which OpenSSL documents as safe to share between threads.
    public final class PrivateKey: @unchecked Sendable {
        let key: OpaquePointer
        public let publicKey: PublicKey

        /// Generates a new random key.
        public init() throws(CryptoError) {
            let context = try unwrap(EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil), "EVP_PKEY_CTX_new_id")
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
            try check(
                EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1),
                "EVP_PKEY_CTX_set_ec_paramgen_curve_nid")
            var generated: OpaquePointer?
            try check(EVP_PKEY_keygen(context, &generated), "EVP_PKEY_keygen")
            key = try unwrap(generated, "EVP_PKEY_keygen")
            publicKey = try PublicKey(x962Representation: try P256.encodedPublicKey(of: key))
        }

        /// Restores a key from its 32-byte big-endian scalar.
        public init(rawRepresentation scalar: [UInt8]) throws(CryptoError) {
            guard scalar.count == P256.scalarByteCount else {
                throw CryptoError("P256.PrivateKey", reason: "a private scalar is 32 bytes")
            }
            let point = try P256.publicPoint(forScalar: scalar)
            key = try P256.makeKey(scalar: scalar, publicPoint: point)
            publicKey = try PublicKey(x962Representation: point)
        }

        deinit { EVP_PKEY_free(key) }

        /// Signs with a key given by its scalar, without deriving the public
        /// key: a quarter of the work of `init(rawRepresentation:)` plus
        /// `signature(for:)`, for a key that only signs once.
        public static func signature(for message: [UInt8], scalar: [UInt8]) throws(CryptoError) -> [UInt8] {
            guard scalar.count == P256.scalarByteCount else {
                throw CryptoError("P256.PrivateKey", reason: "a private scalar is 32 bytes")
            }
            let key = try P256.makeKey(scalar: scalar, publicPoint: nil)
            defer { EVP_PKEY_free(key) }
            return try P256.sign(message, with: key)
        }

        /// The 32-byte private scalar. A secret: zero it when done.
        public var rawRepresentation: [UInt8] {
            var bignum: OpaquePointer?
            guard EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &bignum) == 1, let bignum else {
                preconditionFailure("an EC private key always has its scalar")
            }
            defer { BN_clear_free(bignum) }
            var scalar = [UInt8](repeating: 0, count: P256.scalarByteCount)
            _ = BN_bn2binpad(bignum, &scalar, Int32(P256.scalarByteCount))
            return scalar
        }

        /// An ECDSA signature over SHA-256(`message`), DER-encoded as
        /// WebAuthn and CTAP expect for ES256.
        public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
            try P256.sign(message, with: key)
        }

        /// The ECDH shared secret with `peer`: the x-coordinate of the shared
        /// point (CTAP 2.1 §6.5.6 "ecdh").
        public func sharedSecret(with peer: PublicKey) throws(CryptoError) -> [UInt8] {
            let context = try unwrap(EVP_PKEY_CTX_new(key, nil), "EVP_PKEY_CTX_new")
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_derive_init(context), "EVP_PKEY_derive_init")
            try check(EVP_PKEY_derive_set_peer(context, peer.key), "EVP_PKEY_derive_set_peer")
            var length = 0
            try check(EVP_PKEY_derive(context, nil, &length), "EVP_PKEY_derive")
            var secret = [UInt8](repeating: 0, count: length)
            try check(EVP_PKEY_derive(context, &secret, &length), "EVP_PKEY_derive")
            return Array(secret.prefix(length))
        }
    }

    /// A P-256 public key.
    public final class PublicKey: @unchecked Sendable, Equatable {
        let key: OpaquePointer
        /// The uncompressed SEC1 point: `04 || x || y`.
        public let x962Representation: [UInt8]

        public convenience init(x: [UInt8], y: [UInt8]) throws(CryptoError) {
            guard x.count == P256.coordinateByteCount, y.count == P256.coordinateByteCount else {
                throw CryptoError("P256.PublicKey", reason: "coordinates are 32 bytes each")
            }
            try self.init(x962Representation: [0x04] + x + y)
        }

        /// Accepts an uncompressed point; OpenSSL rejects points off the curve.
        public init(x962Representation point: [UInt8]) throws(CryptoError) {
            guard point.count == 1 + 2 * P256.coordinateByteCount, point[0] == 0x04 else {
                throw CryptoError("P256.PublicKey", reason: "expected a 65-byte uncompressed point")
            }
            key = try P256.makeKey(scalar: nil, publicPoint: point)
            x962Representation = point
        }

        deinit { EVP_PKEY_free(key) }

        public var x: [UInt8] { Array(x962Representation[1...32]) }
        public var y: [UInt8] { Array(x962Representation[33...64]) }

        /// The DER SubjectPublicKeyInfo, as PEM files and X.509 hold it.
        public var derRepresentation: [UInt8] { subjectPublicKeyInfo(of: key) }

        /// Checks a DER ECDSA signature over SHA-256(`message`).
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            evpVerify(signature, for: message, with: key, digest: EVP_sha256())
        }

        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.x962Representation == rhs.x962Representation
        }
    }

    // MARK: - Helpers over OpenSSL 3's provider API

    static func sign(_ message: [UInt8], with key: OpaquePointer) throws(CryptoError) -> [UInt8] {
        try evpSign(message, with: key, digest: EVP_sha256())
    }

    static func encodedPublicKey(of key: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        try check(
            EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, &point, point.count, &length),
            "EVP_PKEY_get_octet_string_param(pub)")
        return Array(point.prefix(length))
    }

    /// The uncompressed public point `scalar × G`.
    static func publicPoint(forScalar scalar: [UInt8]) throws(CryptoError) -> [UInt8] {
        let group = try unwrap(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1), "EC_GROUP_new_by_curve_name")
        defer { EC_GROUP_free(group) }
        let bignum = try unwrap(BN_bin2bn(scalar, Int32(scalar.count), nil), "BN_bin2bn")
        defer { BN_clear_free(bignum) }
        guard BN_is_zero(bignum) == 0, BN_cmp(bignum, EC_GROUP_get0_order(group)) < 0 else {
            throw CryptoError("P256.PrivateKey", reason: "scalar out of range")
        }
        let point = try unwrap(EC_POINT_new(group), "EC_POINT_new")
        defer { EC_POINT_free(point) }
        try check(EC_POINT_mul(group, point, bignum, nil, nil, nil), "EC_POINT_mul")
        var encoded = [UInt8](repeating: 0, count: 65)
        let length = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, encoded.count, nil)
        guard length == 65 else { throw CryptoError("EC_POINT_point2oct") }
        return encoded
    }

    /// Builds an `EVP_PKEY` from its parts: a public key from a point, a
    /// key pair from both, or a signing-only private key from a scalar.
    static func makeKey(scalar: [UInt8]?, publicPoint: [UInt8]?) throws(CryptoError) -> OpaquePointer {
        let builder = try unwrap(OSSL_PARAM_BLD_new(), "OSSL_PARAM_BLD_new")
        defer { OSSL_PARAM_BLD_free(builder) }
        try check(
            OSSL_PARAM_BLD_push_utf8_string(builder, authkeyd_PARAM_GROUP_NAME, authkeyd_CURVE_P256, 0),
            "OSSL_PARAM_BLD_push_utf8_string")
        if let publicPoint {
            try check(
                OSSL_PARAM_BLD_push_octet_string(builder, authkeyd_PARAM_PUB_KEY, publicPoint, publicPoint.count),
                "OSSL_PARAM_BLD_push_octet_string")
        }
        var bignum: OpaquePointer?
        defer { if let bignum { BN_clear_free(bignum) } }
        if let scalar {
            bignum = try unwrap(BN_secure_new(), "BN_secure_new")
            _ = BN_bin2bn(scalar, Int32(scalar.count), bignum)
            try check(OSSL_PARAM_BLD_push_BN(builder, authkeyd_PARAM_PRIV_KEY, bignum), "OSSL_PARAM_BLD_push_BN")
        }
        let params = try unwrap(OSSL_PARAM_BLD_to_param(builder), "OSSL_PARAM_BLD_to_param")
        defer { OSSL_PARAM_free(params) }
        let context = try unwrap(EVP_PKEY_CTX_new_from_name(nil, "EC", nil), "EVP_PKEY_CTX_new_from_name")
        defer { EVP_PKEY_CTX_free(context) }
        try check(EVP_PKEY_fromdata_init(context), "EVP_PKEY_fromdata_init")
        var key: OpaquePointer?
        let selection = scalar == nil ? authkeyd_EVP_PKEY_PUBLIC_KEY : authkeyd_EVP_PKEY_KEYPAIR
        guard scalar != nil || publicPoint != nil else { throw CryptoError("P256", reason: "no key material") }
        try check(EVP_PKEY_fromdata(context, &key, Int32(selection), params), "EVP_PKEY_fromdata")
        let made = try unwrap(key, "EVP_PKEY_fromdata")
        if scalar == nil {
            // fromdata does not check that the point lies on the curve.
            let check = EVP_PKEY_CTX_new(made, nil)
            defer { EVP_PKEY_CTX_free(check) }
            guard let check, EVP_PKEY_public_check(check) == 1 else {
                EVP_PKEY_free(made)
                throw CryptoError("P256.PublicKey", reason: "point is not on the curve")
            }
        }
        return made
    }
}
