import CBOR
import Crypto

/// The platform's half of PIN/UV auth protocols 1 and 2 (CTAP 2.1 §6.5.6,
/// §6.5.7), written from the specification and not shared with the key's:
/// a harness that can authenticate its requests reaches past the key's
/// signature checks into credential management, bio enrollment and config.
/// Public for the conformance tests, which need tokens libfido2 would never
/// ask for (the wrong permission, a write with a bad hash).
public struct PlatformPIN {
    public let version: Int
    /// The platform's key-agreement key, as a COSE_Key for the key.
    public let coseKey: CBOR
    public let sharedSecret: [UInt8]

    /// Agrees on a shared secret with the key's key-agreement key; nil when
    /// the key sent something that is not a P-256 point.
    public init?(version: Int, keyAgreement: CBOR?) {
        guard let map = keyAgreement?.mapValue, let x = map[-2]?.bytesValue, let y = map[-3]?.bytesValue,
            let peer = try? P256.PublicKey(x: x, y: y), let own = try? P256.PrivateKey(),
            let z = try? own.sharedSecret(with: peer)
        else { return nil }
        self.version = version
        coseKey = .map([1: 2, 3: -25, -1: 1, -2: .bytes(own.publicKey.x), -3: .bytes(own.publicKey.y)])
        if version == 1 {
            sharedSecret = SHA256.hash(z)
        } else {
            let salt = [UInt8](repeating: 0, count: 32)
            guard
                let hmacKey = try? HKDFSHA256.deriveKey(
                    inputKeyMaterial: z, salt: salt, info: Array("CTAP2 HMAC key".utf8), outputByteCount: 32),
                let aesKey = try? HKDFSHA256.deriveKey(
                    inputKeyMaterial: z, salt: salt, info: Array("CTAP2 AES key".utf8), outputByteCount: 32)
            else { return nil }
            sharedSecret = hmacKey + aesKey
        }
    }

    private var aesKey: [UInt8] { version == 1 ? sharedSecret : Array(sharedSecret.suffix(32)) }

    public func encrypt(_ plaintext: [UInt8]) -> [UInt8] {
        // AES-CBC without padding: callers pass whole blocks.
        let iv = version == 1 ? [UInt8](repeating: 0, count: 16) : secureRandomBytes(16)
        let ciphertext = (try? AES256.cbcEncrypt(plaintext, key: aesKey, iv: iv)) ?? []
        return version == 1 ? ciphertext : iv + ciphertext
    }

    public func decrypt(_ ciphertext: [UInt8]) -> [UInt8]? {
        let iv = version == 1 ? [UInt8](repeating: 0, count: 16) : Array(ciphertext.prefix(16))
        let body = version == 1 ? ciphertext : Array(ciphertext.dropFirst(16))
        return try? AES256.cbcDecrypt(body, key: aesKey, iv: iv)
    }

    /// pinUvAuthParam over `message` with the shared secret.
    public func authenticate(_ message: [UInt8]) -> [UInt8] {
        Self.authenticate(message, key: version == 1 ? sharedSecret : Array(sharedSecret.prefix(32)), version: version)
    }

    /// pinUvAuthParam over `message` with `key` (a pinUvAuthToken).
    public static func authenticate(_ message: [UInt8], key: [UInt8], version: Int) -> [UInt8] {
        let mac = HMACSHA256.authenticationCode(for: message, key: key)
        return version == 1 ? Array(mac.prefix(16)) : mac
    }

    /// LEFT(SHA-256(pin), 16), encrypted.
    public func pinHashEncrypted(_ pin: [UInt8]) -> [UInt8] { encrypt(Array(SHA256.hash(pin).prefix(16))) }

    /// A new PIN padded with zeros to 64 bytes, encrypted.
    public func newPINEncrypted(_ pin: [UInt8]) -> [UInt8] {
        encrypt(Array(pin.prefix(64)) + [UInt8](repeating: 0, count: 64 - min(64, pin.count)))
    }
}
