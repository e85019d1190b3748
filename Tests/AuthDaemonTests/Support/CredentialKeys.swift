import AuthProtocol
import CBOR
import Crypto
import FIDO2

/// The pieces of create and get results a test checks by hand: the
/// credential public key a registration attested, and an assertion's
/// signature checked against it with libcrypto, not the broker's word.
enum CredentialKeys {
    /// The COSE_Key in a registration's attestedCredentialData.
    static func attestedPublicKey(of created: CredentialResult) -> CBOR? {
        guard let data = authenticatorData(of: created) else { return nil }
        return (try? ParsedAuthenticatorData(data))?.credentialPublicKey
    }

    /// `response.authenticatorData`, decoded.
    static func authenticatorData(of result: CredentialResult) -> [UInt8]? {
        result.credential["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode)
    }

    /// The flags byte of `response.authenticatorData` (after the 32-byte rpIdHash).
    static func flags(of result: CredentialResult) -> UInt8? {
        guard let data = authenticatorData(of: result), data.count > 32 else { return nil }
        return data[32]
    }

    /// Whether the assertion's signature verifies over authenticatorData ‖
    /// clientDataHash (WebAuthn §7.2 step 20) with `publicKey`, an ES256
    /// or EdDSA COSE_Key.
    static func signatureVerifies(_ asserted: CredentialResult, clientDataHash: [UInt8], publicKey: CBOR) -> Bool {
        guard let data = authenticatorData(of: asserted),
            let signature = asserted.credential["response"]?["signature"]?.stringValue.flatMap(Base64URL.decode),
            let key = publicKey.mapValue, let x = key[-2]?.bytesValue
        else { return false }
        let message = data + clientDataHash
        switch key[3]?.intValue {
        case -7:
            guard let y = key[-3]?.bytesValue, let point = try? P256.PublicKey(x: x, y: y) else { return false }
            return point.isValidSignature(signature, for: message)
        case -8:
            guard let point = try? Ed25519.PublicKey(rawRepresentation: x) else { return false }
            return point.isValidSignature(signature, for: message)
        default:
            return false
        }
    }
}
