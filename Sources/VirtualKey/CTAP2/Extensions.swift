import CBOR
import Crypto

/// The makeCredential extensions (CTAP 2.1 §12): what the request asked
/// for, and the outputs that go into authenticator data.
struct MakeCredentialExtensions {
    var protection: UInt8 = 1
    var hmacSecret = false
    var credentialBlob: [UInt8] = []
    var map: CBORMap = [:]

    init(_ input: CBORMap, rpID: String, state: KeyState) throws(CTAP2Status) {
        if let item = input["credProtect"] {
            guard let level = item.intValue else { throw .cborUnexpectedType }
            // Unknown levels are ignored rather than guessed at.
            if (1...3).contains(level) {
                protection = UInt8(level)
                map["credProtect"] = .int(level)
            }
        }
        if let item = input["hmac-secret"] {
            guard let wanted = item.boolValue else { throw .cborUnexpectedType }
            if wanted {
                hmacSecret = true
                map["hmac-secret"] = true
            }
        }
        if let item = input["credBlob"] {
            guard let blob = item.bytesValue else { throw .cborUnexpectedType }
            let fits = blob.count <= Authenticator.maxCredentialBlobLength
            if fits { credentialBlob = blob }
            map["credBlob"] = .bool(fits)
        }
        if let item = input["minPinLength"] {
            guard let wanted = item.boolValue else { throw .cborUnexpectedType }
            // Only relying parties the owner allowed may learn the length.
            if wanted && state.minPINLengthRPIDs.contains(rpID) {
                map["minPinLength"] = .int(state.minPINLength)
            }
        }
    }
}

/// The hmac-secret input of getAssertion, checked and decrypted: one or two
/// 32-byte salts, and how to encrypt the output back.
struct HMACSecretRequest {
    let salts: [[UInt8]]
    let sharedSecret: [UInt8]
    let authProtocol: PINUVAuthProtocol

    init(_ item: CBOR, keyAgreement: [PINUVAuthProtocol: P256.PrivateKey]) throws(CTAP2Status) {
        guard let map = item.mapValue else { throw .cborUnexpectedType }
        guard let platformItem = map[0x01], let saltEncItem = map[0x02], let saltAuthItem = map[0x03] else {
            throw .missingParameter
        }
        guard let saltEnc = saltEncItem.bytesValue, let saltAuth = saltAuthItem.bytesValue else {
            throw .cborUnexpectedType
        }
        let protocolNumber = map[0x04]?.intValue ?? 1
        guard let chosen = PINUVAuthProtocol(rawValue: protocolNumber), let ownKey = keyAgreement[chosen] else {
            throw .invalidParameter
        }
        let platformKey = try COSEKey.platformKey(platformItem)
        let shared = try chosen.sharedSecret(keyAgreement: ownKey, platformKey: platformKey)
        guard chosen.verify(saltEnc, signature: saltAuth, key: shared) else { throw .pinAuthInvalid }
        let salt = try chosen.decrypt(saltEnc, sharedSecret: shared)
        guard salt.count == 32 || salt.count == 64 else { throw .invalidParameter }
        salts = salt.count == 32 ? [salt] : [Array(salt.prefix(32)), Array(salt.suffix(32))]
        sharedSecret = shared
        authProtocol = chosen
    }

    /// HMAC-SHA-256(CredRandom, salt) for each salt, encrypted for the host.
    func output(credRandom: [UInt8]) throws(CTAP2Status) -> [UInt8] {
        let outputs = salts.flatMap { HMACSHA256.authenticationCode(for: $0, key: credRandom) }
        return try authProtocol.encrypt(outputs, sharedSecret: sharedSecret)
    }
}

extension KeyState {
    /// hmac-secret's CredRandom for a credential: derived from the master
    /// key, one with and one without user verification (CTAP 2.1 §12.5),
    /// so nothing per credential needs storing.
    func credRandom(credentialID: [UInt8], userVerified: Bool) -> [UInt8] {
        HMACSHA256.authenticationCode(
            for: Array("authkeyd credRandom".utf8) + [userVerified ? 1 : 0] + credentialID, key: masterKey)
    }
}
