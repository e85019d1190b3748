import CBOR
import Crypto
import SystemKit

/// PIN/UV auth protocols 1 and 2 (CTAP 2.1 §6.5.6, §6.5.7): how a platform
/// and the key agree on a shared secret, encrypt PINs and salts with it, and
/// authenticate requests with it or with a pinUvAuthToken.
enum PINUVAuthProtocol: Int, Sendable, CaseIterable {
    case one = 1
    case two = 2

    /// Derives the shared secret from the platform's key-agreement key:
    /// SHA-256(Z) for protocol 1; for protocol 2, an HMAC key and an AES key
    /// from HKDF-SHA-256 with a zero salt.
    func sharedSecret(keyAgreement: P256.PrivateKey, platformKey: P256.PublicKey) throws(CTAP2Status) -> [UInt8] {
        guard var z = try? keyAgreement.sharedSecret(with: platformKey) else { throw .invalidParameter }
        defer { zeroSecret(&z) }
        switch self {
        case .one:
            return SHA256.hash(z)
        case .two:
            let salt = [UInt8](repeating: 0, count: 32)
            guard
                var hmacKey = try? HKDFSHA256.deriveKey(
                    inputKeyMaterial: z, salt: salt, info: Array("CTAP2 HMAC key".utf8), outputByteCount: 32),
                var aesKey = try? HKDFSHA256.deriveKey(
                    inputKeyMaterial: z, salt: salt, info: Array("CTAP2 AES key".utf8), outputByteCount: 32)
            else { throw .other }
            defer {
                zeroSecret(&hmacKey)
                zeroSecret(&aesKey)
            }
            return hmacKey + aesKey
        }
    }

    private func aesKey(_ sharedSecret: [UInt8]) -> [UInt8] {
        self == .one ? sharedSecret : Array(sharedSecret[32...])
    }

    func encrypt(_ plaintext: [UInt8], sharedSecret: [UInt8]) throws(CTAP2Status) -> [UInt8] {
        let iv = self == .one ? [UInt8](repeating: 0, count: 16) : secureRandomBytes(16)
        guard let ciphertext = try? AES256.cbcEncrypt(plaintext, key: aesKey(sharedSecret), iv: iv) else { throw .other }
        return self == .one ? ciphertext : iv + ciphertext
    }

    /// Decrypts; a ciphertext of the wrong shape is `invalidParameter`.
    func decrypt(_ ciphertext: [UInt8], sharedSecret: [UInt8]) throws(CTAP2Status) -> [UInt8] {
        let iv: [UInt8], body: [UInt8]
        switch self {
        case .one:
            iv = [UInt8](repeating: 0, count: 16)
            body = ciphertext
        case .two:
            guard ciphertext.count >= 16 else { throw .invalidParameter }
            iv = Array(ciphertext.prefix(16))
            body = Array(ciphertext.dropFirst(16))
        }
        guard !body.isEmpty, let plaintext = try? AES256.cbcDecrypt(body, key: aesKey(sharedSecret), iv: iv) else {
            throw .invalidParameter
        }
        return plaintext
    }

    /// The authentication code: the first 16 bytes of HMAC-SHA-256 for
    /// protocol 1, all 32 for protocol 2. For protocol 2 a shared secret's
    /// HMAC half is used, a pinUvAuthToken as it is.
    func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        switch self {
        case .one:
            return Array(HMACSHA256.authenticationCode(for: message, key: key).prefix(16))
        case .two:
            let hmacKey = key.count == 64 ? Array(key.prefix(32)) : key
            return HMACSHA256.authenticationCode(for: message, key: hmacKey)
        }
    }

    func verify(_ message: [UInt8], signature: [UInt8], key: [UInt8]) -> Bool {
        constantTimeEquals(authenticate(message, key: key), signature)
    }
}

/// COSE_Key encodings of P-256 public keys (RFC 8152 §13.1.1).
enum COSEKey {
    /// An ES256 credential public key.
    static func es256(_ key: P256.PublicKey) -> CBOR {
        .map([1: 2, 3: -7, -1: 1, -2: .bytes(key.x), -3: .bytes(key.y)])
    }

    /// The key-agreement key of the PIN/UV auth protocols (alg ECDH-ES+HKDF-256).
    static func keyAgreement(_ key: P256.PublicKey) -> CBOR {
        .map([1: 2, 3: -25, -1: 1, -2: .bytes(key.x), -3: .bytes(key.y)])
    }

    /// Reads a platform's key-agreement key: an EC2 P-256 point.
    static func platformKey(_ item: CBOR?) throws(CTAP2Status) -> P256.PublicKey {
        guard let item else { throw .missingParameter }
        guard let map = item.mapValue else { throw .cborUnexpectedType }
        guard map[1]?.intValue == 2, map[-1]?.intValue == 1,
            let x = map[-2]?.bytesValue, let y = map[-3]?.bytesValue
        else { throw .invalidParameter }
        guard let key = try? P256.PublicKey(x: x, y: y) else { throw .invalidParameter }
        return key
    }
}
