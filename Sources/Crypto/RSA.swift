internal import CCrypto

/// RSA public keys: COSE algorithm RS256 (-257) credentials, which some
/// keys (Windows Hello's, a few TPM-backed ones) make. authkeyd never holds
/// an RSA private key; it only needs the public key's DER form and a
/// signature check.
public enum RSA {
    /// An RSA public key, from the modulus and exponent a COSE_Key (kty 3)
    /// carries as `n` and `e`.
    public final class PublicKey: @unchecked Sendable {
        let key: OpaquePointer
        public let modulus: [UInt8]
        public let exponent: [UInt8]

        /// `modulus` and `exponent` are big-endian unsigned integers.
        public init(modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) {
            guard modulus.count >= 128, modulus.count <= 1024, !exponent.isEmpty, exponent.count <= 8 else {
                throw CryptoError("RSA.PublicKey", reason: "expected a modulus of 1024 to 8192 bits and a short exponent")
            }
            self.modulus = modulus
            self.exponent = exponent
            let builder = try unwrap(OSSL_PARAM_BLD_new(), "OSSL_PARAM_BLD_new")
            defer { OSSL_PARAM_BLD_free(builder) }
            let n = try unwrap(BN_bin2bn(modulus, Int32(modulus.count), nil), "BN_bin2bn")
            defer { BN_free(n) }
            let e = try unwrap(BN_bin2bn(exponent, Int32(exponent.count), nil), "BN_bin2bn")
            defer { BN_free(e) }
            try check(OSSL_PARAM_BLD_push_BN(builder, authkeyd_PARAM_RSA_N, n), "OSSL_PARAM_BLD_push_BN(n)")
            try check(OSSL_PARAM_BLD_push_BN(builder, authkeyd_PARAM_RSA_E, e), "OSSL_PARAM_BLD_push_BN(e)")
            let params = try unwrap(OSSL_PARAM_BLD_to_param(builder), "OSSL_PARAM_BLD_to_param")
            defer { OSSL_PARAM_free(params) }
            let context = try unwrap(EVP_PKEY_CTX_new_from_name(nil, "RSA", nil), "EVP_PKEY_CTX_new_from_name")
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_fromdata_init(context), "EVP_PKEY_fromdata_init")
            var made: OpaquePointer?
            try check(EVP_PKEY_fromdata(context, &made, Int32(authkeyd_EVP_PKEY_PUBLIC_KEY), params), "EVP_PKEY_fromdata")
            key = try unwrap(made, "EVP_PKEY_fromdata")
        }

        deinit { EVP_PKEY_free(key) }

        /// The DER SubjectPublicKeyInfo (rsaEncryption), as PEM files and
        /// WebAuthn's `getPublicKey()` hold it.
        public var derRepresentation: [UInt8] { subjectPublicKeyInfo(of: key) }

        /// Checks an RSASSA-PKCS1-v1_5 signature over SHA-256(`message`): RS256.
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            evpVerify(signature, for: message, with: key, digest: EVP_sha256())
        }
    }
}
