import CBOR
import Crypto

/// A credential's key pair, of the algorithm the credential was made with.
/// Only the private key is stored (sealed in the credential id); the
/// public key is derived again when it is needed.
enum CredentialKey {
    case es256(P256.PrivateKey)
    case edDSA(Ed25519.PrivateKey)

    /// A new random key.
    static func generate(_ algorithm: CredentialAlgorithm) throws(CTAP2Status) -> CredentialKey {
        do {
            switch algorithm {
            case .es256: return .es256(try P256.PrivateKey())
            case .edDSA: return .edDSA(try Ed25519.PrivateKey())
            }
        } catch {
            throw .other
        }
    }

    /// The key a sealed credential holds.
    static func restore(_ algorithm: CredentialAlgorithm, privateKey: [UInt8]) throws(CTAP2Status) -> CredentialKey {
        do {
            switch algorithm {
            case .es256: return .es256(try P256.PrivateKey(rawRepresentation: privateKey))
            case .edDSA: return .edDSA(try Ed25519.PrivateKey(rawRepresentation: privateKey))
            }
        } catch {
            throw .other
        }
    }

    /// Signs an assertion with a sealed credential's private key. ES256
    /// takes the short way that skips deriving the public key.
    static func signature(
        for message: [UInt8], algorithm: CredentialAlgorithm, privateKey: [UInt8]
    ) throws(CTAP2Status) -> [UInt8] {
        switch algorithm {
        case .es256:
            guard let signature = try? P256.PrivateKey.signature(for: message, scalar: privateKey) else { throw .other }
            return signature
        case .edDSA:
            return try restore(algorithm, privateKey: privateKey).signature(for: message)
        }
    }

    var algorithm: CredentialAlgorithm {
        switch self {
        case .es256: return .es256
        case .edDSA: return .edDSA
        }
    }

    /// The private key's 32 bytes (P-256 scalar or Ed25519 seed). A secret:
    /// zero it when done.
    var rawRepresentation: [UInt8] {
        switch self {
        case .es256(let key): return key.rawRepresentation
        case .edDSA(let key): return key.rawRepresentation
        }
    }

    /// The credential public key as attested credential data and
    /// credential management carry it.
    var cosePublicKey: CBOR {
        switch self {
        case .es256(let key): return COSEKey.es256(key.publicKey)
        case .edDSA(let key): return COSEKey.edDSA(key.publicKey)
        }
    }

    /// ES256: DER ECDSA over SHA-256(message); EdDSA: the 64-byte Ed25519
    /// signature of the message itself.
    func signature(for message: [UInt8]) throws(CTAP2Status) -> [UInt8] {
        do {
            switch self {
            case .es256(let key): return try key.signature(for: message)
            case .edDSA(let key): return try key.signature(for: message)
            }
        } catch {
            throw .other
        }
    }
}

extension COSEKey {
    /// An EdDSA credential public key: OKP (kty 1), alg -8, crv Ed25519 (6),
    /// x the 32-byte key (RFC 9053 §7.2, WebAuthn §6.5.1.1).
    static func edDSA(_ key: Ed25519.PublicKey) -> CBOR {
        .map([1: 1, 3: -8, -1: 6, -2: .bytes(key.rawRepresentation)])
    }
}

extension Authenticator {
    /// CTAP 2.1 §6.1 step 3: every entry of pubKeyCredParams is checked;
    /// the first `public-key` entry with an algorithm this key has wins.
    func chooseAlgorithm(_ parameters: [CBOR]) throws(CTAP2Status) -> CredentialAlgorithm {
        var chosen: CredentialAlgorithm?
        for entry in parameters {
            guard let map = entry.mapValue else { throw .cborUnexpectedType }
            guard let alg = map["alg"], let type = map["type"] else { throw .missingParameter }
            guard let algValue = alg.intValue, let typeName = type.textValue else { throw .cborUnexpectedType }
            guard chosen == nil, typeName == "public-key" else { continue }
            chosen = configuration.algorithms.first { $0.rawValue == algValue }
        }
        guard let chosen else { throw .unsupportedAlgorithm }
        return chosen
    }
}
