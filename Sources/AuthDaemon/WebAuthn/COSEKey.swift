import CBOR
import Crypto
import FIDO2

/// A credential public key as a COSE_Key (RFC 9053, WebAuthn §6.5.1.1),
/// built from libfido2's form of it. Credential management lists a key's
/// credentials with their public keys, which libfido2 hands over decoded;
/// a client that rebuilds what a registration gave it (ssh-keygen -K
/// recovering its key files) wants the form attestedCredentialData carries.
enum COSEKey {
    /// The COSE_Key of `raw` (`StoredCredential.publicKey`), CBOR encoded;
    /// nil when the algorithm is not one the daemon serves or the bytes are
    /// not the length libfido2 gives that algorithm.
    static func encoded(_ raw: [UInt8], algorithm: COSEAlgorithm?) -> [UInt8]? {
        members(raw, algorithm: algorithm).map { CBOR.map($0).encoded() }
    }

    private static func members(_ raw: [UInt8], algorithm: COSEAlgorithm?) -> CBORMap? {
        let coordinate = P256.coordinateByteCount
        let modulus = Credential.rs256ModulusByteCount
        switch algorithm {
        case .es256 where raw.count == 2 * coordinate:
            // kty EC2, crv P-256, then x and y.
            return [
                keyTypeLabel: 2, algorithmLabel: .int(Int(COSEAlgorithm.es256.rawValue)), -1: 1,
                -2: .bytes(Array(raw.prefix(coordinate))), -3: .bytes(Array(raw.suffix(coordinate))),
            ]
        case .edDSA where raw.count == Ed25519.publicKeyByteCount:
            // kty OKP, crv Ed25519, then the point.
            return [keyTypeLabel: 1, algorithmLabel: .int(Int(COSEAlgorithm.edDSA.rawValue)), -1: 6, -2: .bytes(raw)]
        case .rs256 where raw.count == modulus + Credential.rs256ExponentByteCount:
            // kty RSA, then n and e (libfido2's rs256_pk_t: the modulus,
            // then a 3-byte exponent).
            return [
                keyTypeLabel: 3, algorithmLabel: .int(Int(COSEAlgorithm.rs256.rawValue)),
                -1: .bytes(Array(raw.prefix(modulus))), -2: .bytes(Array(raw.dropFirst(modulus))),
            ]
        default:
            return nil
        }
    }

    // The common COSE_Key labels (RFC 9052 §7.1).
    private static let keyTypeLabel: CBOR = 1
    private static let algorithmLabel: CBOR = 3
}
