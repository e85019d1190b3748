import Crypto
import SystemKit

/// What a credential id carries. The key keeps no table of its
/// non-discoverable credentials: their private key travels inside the id,
/// sealed with the key's master key (AES-256-GCM) and bound to the relying
/// party by using its id hash as associated data, so an id presented for
/// another relying party does not open.
struct SealedCredential: Equatable {
    var privateKey: [UInt8]
    /// What the key signs with. Ids sealed before the key had EdDSA have
    /// the flag clear: ES256.
    var algorithm: CredentialAlgorithm
    var protection: UInt8
    var isDiscoverable: Bool
    /// Made with the hmac-secret extension.
    var hasHMACSecret: Bool
    var credentialBlob: [UInt8]

    private static let formatVersion: UInt8 = 1

    /// `version ‖ nonce(12) ‖ AES-GCM(key ‖ credProtect ‖ flags ‖ blobLength ‖ blob) ‖ tag(16)`,
    /// 64 bytes plus the credBlob. Both algorithms' private keys are 32
    /// bytes; flag 0x04 marks an Ed25519 one.
    func seal(masterKey: [UInt8], rpIDHash: [UInt8]) throws(CTAP2Status) -> [UInt8] {
        let nonce = secureRandomBytes(AES256.gcmNonceByteCount)
        let flags: UInt8 = (isDiscoverable ? 0x01 : 0) | (hasHMACSecret ? 0x02 : 0) | (algorithm == .edDSA ? 0x04 : 0)
        var plaintext = privateKey + [protection, flags, UInt8(credentialBlob.count)] + credentialBlob
        defer { zeroSecret(&plaintext) }
        guard let sealed = try? AES256.gcmSeal(plaintext, key: masterKey, nonce: nonce, authenticating: rpIDHash) else {
            throw .other
        }
        return [Self.formatVersion] + nonce + sealed
    }

    /// Opens an id made by this key for this relying party; nil for any
    /// other id, including another key's.
    static func open(_ id: [UInt8], masterKey: [UInt8], rpIDHash: [UInt8]) -> SealedCredential? {
        let minimum = 1 + AES256.gcmNonceByteCount + P256.scalarByteCount + 3 + AES256.gcmTagByteCount
        guard id.count >= minimum, id.count <= 256, id[0] == formatVersion else { return nil }
        let nonce = Array(id[1...AES256.gcmNonceByteCount])
        let sealed = Array(id[(1 + AES256.gcmNonceByteCount)...])
        guard var plaintext = try? AES256.gcmOpen(sealed, key: masterKey, nonce: nonce, authenticating: rpIDHash) else {
            return nil
        }
        defer { zeroSecret(&plaintext) }
        let keyEnd = P256.scalarByteCount
        let blobLength = Int(plaintext[keyEnd + 2])
        guard plaintext.count == keyEnd + 3 + blobLength else { return nil }
        return SealedCredential(
            privateKey: Array(plaintext[0..<keyEnd]),
            algorithm: plaintext[keyEnd + 1] & 0x04 != 0 ? .edDSA : .es256, protection: plaintext[keyEnd],
            isDiscoverable: plaintext[keyEnd + 1] & 0x01 != 0,
            hasHMACSecret: plaintext[keyEnd + 1] & 0x02 != 0,
            credentialBlob: Array(plaintext[(keyEnd + 3)...]))
    }
}
