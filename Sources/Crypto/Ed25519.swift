internal import CCrypto

/// Ed25519 (RFC 8032) keys: COSE algorithm EdDSA (-8) credentials.
///
/// A private key is its 32-byte seed. OpenSSL keeps it in its secure heap
/// and clears it when the key is freed; the copies this type hands out
/// (`rawRepresentation`) are the caller's to zero.
public enum Ed25519 {
    public static let seedByteCount = 32
    public static let publicKeyByteCount = 32
    public static let signatureByteCount = 64

    /// An Ed25519 private key. The wrapped `EVP_PKEY` is never modified
    /// after creation, which OpenSSL documents as safe to share between
    /// threads.
    public final class PrivateKey: @unchecked Sendable {
        let key: OpaquePointer
        public let publicKey: PublicKey

        /// Generates a new random key.
        public init() throws(CryptoError) {
            let context = try unwrap(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil), "EVP_PKEY_CTX_new_id(ED25519)")
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
            var generated: OpaquePointer?
            try check(EVP_PKEY_keygen(context, &generated), "EVP_PKEY_keygen")
            key = try unwrap(generated, "EVP_PKEY_keygen")
            publicKey = try PublicKey(rawRepresentation: try Ed25519.rawPublicKey(of: key))
        }

        /// Restores a key from its 32-byte seed.
        public init(rawRepresentation seed: [UInt8]) throws(CryptoError) {
            guard seed.count == Ed25519.seedByteCount else {
                throw CryptoError("Ed25519.PrivateKey", reason: "a private key (seed) is 32 bytes")
            }
            key = try unwrap(
                EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count), "EVP_PKEY_new_raw_private_key")
            do {
                publicKey = try PublicKey(rawRepresentation: try Ed25519.rawPublicKey(of: key))
            } catch {
                EVP_PKEY_free(key)
                throw error
            }
        }

        deinit { EVP_PKEY_free(key) }

        /// The 32-byte seed. A secret: zero it when done.
        public var rawRepresentation: [UInt8] {
            var seed = [UInt8](repeating: 0, count: Ed25519.seedByteCount)
            var length = seed.count
            guard EVP_PKEY_get_raw_private_key(key, &seed, &length) == 1, length == Ed25519.seedByteCount else {
                preconditionFailure("an Ed25519 private key always has its seed")
            }
            return seed
        }

        /// The 64-byte Ed25519 signature of `message` itself (PureEdDSA:
        /// no separate hash), as WebAuthn and CTAP expect for EdDSA.
        public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
            try evpSign(message, with: key, digest: nil)
        }
    }

    /// An Ed25519 public key.
    public final class PublicKey: @unchecked Sendable, Equatable {
        let key: OpaquePointer
        /// The 32-byte encoded point (RFC 8032 §5.1.5), COSE's `x`.
        public let rawRepresentation: [UInt8]

        public init(rawRepresentation bytes: [UInt8]) throws(CryptoError) {
            guard bytes.count == Ed25519.publicKeyByteCount else {
                throw CryptoError("Ed25519.PublicKey", reason: "a public key is 32 bytes")
            }
            key = try unwrap(
                EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, bytes, bytes.count), "EVP_PKEY_new_raw_public_key")
            rawRepresentation = bytes
        }

        deinit { EVP_PKEY_free(key) }

        /// The DER SubjectPublicKeyInfo of RFC 8410 (OID 1.3.101.112), as
        /// PEM files and WebAuthn's `getPublicKey()` hold it.
        public var derRepresentation: [UInt8] { subjectPublicKeyInfo(of: key) }

        /// Checks a 64-byte signature over `message`.
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            guard signature.count == Ed25519.signatureByteCount else { return false }
            return evpVerify(signature, for: message, with: key, digest: nil)
        }

        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.rawRepresentation == rhs.rawRepresentation
        }
    }

    static func rawPublicKey(of key: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: publicKeyByteCount)
        var length = bytes.count
        try check(EVP_PKEY_get_raw_public_key(key, &bytes, &length), "EVP_PKEY_get_raw_public_key")
        guard length == publicKeyByteCount else { throw CryptoError("EVP_PKEY_get_raw_public_key", reason: "not 32 bytes") }
        return bytes
    }
}
