import Crypto
import FIDO2

extension Credential {
    /// The credential public key as a DER SubjectPublicKeyInfo, what
    /// WebAuthn's `getPublicKey()` returns: for ES256 an EC P-256 key, for
    /// EdDSA RFC 8410's Ed25519 key, for RS256 an rsaEncryption key. nil
    /// when libfido2's form of the key is not one of those.
    var subjectPublicKeyInfo: [UInt8]? {
        let raw = publicKey
        switch coseAlgorithm {
        case .es256 where raw.count == 2 * P256.coordinateByteCount:
            return (try? P256.PublicKey(x: Array(raw.prefix(32)), y: Array(raw.suffix(32))))?.derRepresentation
        case .edDSA where raw.count == Ed25519.publicKeyByteCount:
            return (try? Ed25519.PublicKey(rawRepresentation: raw))?.derRepresentation
        case .rs256 where raw.count == Self.rs256ModulusByteCount + Self.rs256ExponentByteCount:
            // libfido2's rs256_pk_t: the modulus, then a 3-byte exponent.
            let modulus = Array(raw.prefix(Self.rs256ModulusByteCount))
            return (try? RSA.PublicKey(modulus: modulus, exponent: Array(raw.suffix(Self.rs256ExponentByteCount))))?
                .derRepresentation
        default:
            return nil
        }
    }

    static let rs256ModulusByteCount = 256
    static let rs256ExponentByteCount = 3
}
