import Crypto
import Testing
@testable import VirtualKey

/// Credential ids sealed before the key had EdDSA still open, as ES256:
/// the algorithm is a flag that those ids have clear.
@Suite struct CredentialSealTests {
    let masterKey = secureRandomBytes(32)
    let rpIDHash = SHA256.hash(Array("example.org".utf8))

    @Test func eachAlgorithmSurvivesSealing() throws {
        for algorithm in CredentialAlgorithm.allCases {
            let sealed = SealedCredential(
                privateKey: secureRandomBytes(32), algorithm: algorithm, protection: 2, isDiscoverable: true,
                hasHMACSecret: true, credentialBlob: [7, 7])
            let id = try sealed.seal(masterKey: masterKey, rpIDHash: rpIDHash)
            #expect(SealedCredential.open(id, masterKey: masterKey, rpIDHash: rpIDHash) == sealed)
        }
    }

    /// The layout of format 1 as it was: key, credProtect, flags (0x01
    /// discoverable, 0x02 hmac-secret), blob length, blob; sealed here by
    /// hand.
    @Test func anIDInTheFormatBeforeEdDSAOpensAsES256() throws {
        let scalar = try P256.PrivateKey().rawRepresentation
        let nonce = secureRandomBytes(12)
        let plaintext = scalar + [1, 0x03, 0]
        let id = [1] + nonce + (try AES256.gcmSeal(plaintext, key: masterKey, nonce: nonce, authenticating: rpIDHash))
        let opened = try #require(SealedCredential.open(id, masterKey: masterKey, rpIDHash: rpIDHash))
        #expect(opened.algorithm == .es256)
        #expect(opened.privateKey == scalar && opened.isDiscoverable && opened.hasHMACSecret && opened.protection == 1)
        #expect(opened.credentialBlob.isEmpty)
    }
}
