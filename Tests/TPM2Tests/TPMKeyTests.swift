import Crypto
import TestSupport
import Testing
import TPM2

/// ES256 keys made in a TPM (swtpm, one for the suite) and used there:
/// what the platform authenticator's key store rests on.
@Suite(.serialized) final class TPMKeyTests {
    let tpmUnderTest: TPMUnderTest
    var tpm: TPM { tpmUnderTest.tpm }

    init() throws { tpmUnderTest = try TPMUnderTest() }

    private func signs(_ key: WrappedKey, on tpm: TPM, message: [UInt8] = Array("the message".utf8)) throws -> Bool {
        let signature = try tpm.sign(digest: SHA256.hash(message), with: key)
        return try P256.PublicKey(x962Representation: key.publicPoint).isValidSignature(signature, for: message)
    }

    @Test func aKeyMadeInTheTPMSignsAndOpenSSLVerifiesIt() throws {
        let key = try tpm.makeES256Key()
        #expect(key.publicPoint.count == 65 && key.publicPoint[0] == 0x04)
        let message = Array("clientDataHash and authenticatorData".utf8)
        let signature = try tpm.sign(digest: SHA256.hash(message), with: key)
        let publicKey = try P256.PublicKey(x962Representation: key.publicPoint)
        #expect(publicKey.isValidSignature(signature, for: message))
        #expect(!publicKey.isValidSignature(signature, for: message + [0]), "a signature over other bytes must not verify")
        // ECDSA: a new signature each time, each valid.
        let again = try tpm.sign(digest: SHA256.hash(message), with: key)
        #expect(again != signature)
        #expect(publicKey.isValidSignature(again, for: message))
    }

    @Test func eachKeyIsItsOwn() throws {
        let first = try tpm.makeES256Key()
        let second = try tpm.makeES256Key()
        #expect(first.publicPoint != second.publicPoint)
        let message = Array("signed by the first".utf8)
        let signature = try tpm.sign(digest: SHA256.hash(message), with: first)
        #expect(try !P256.PublicKey(x962Representation: second.publicPoint).isValidSignature(signature, for: message))
    }

    /// The wrapped key, as a credential id or a file would carry it, is
    /// only bytes: read back, it signs on its own TPM.
    @Test func aKeyReadBackFromItsBytesSigns() throws {
        let key = try tpm.makeES256Key()
        let readBack = try WrappedKey(publicPart: key.publicPart, privatePart: key.privatePart)
        #expect(readBack == key)
        #expect(try signs(readBack, on: tpm))
        // About 218 bytes (public 88 + private 126, per the TPM): it fits in
        // a credential id (CTAP allows 1,023 bytes there).
        #expect(key.publicPart.count + key.privatePart.count < 300)
    }

    @Test func anotherTPMCannotUseTheKey() throws {
        let key = try tpm.makeES256Key()
        let other = try SoftwareTPM()
        let otherTPM = try TPM(tcti: other.tcti)
        #expect {
            try otherTPM.sign(digest: SHA256.hash([1, 2, 3]), with: key)
        } throws: { error in
            (error as? TPMError)?.isForeignBlob == true
        }
        // Its own TPM still signs with it.
        #expect(try signs(key, on: tpm))
    }

    /// The same TPM after a restart (the daemon's next start, the machine's
    /// next boot): the primary is made again from the same seed, and the
    /// keys made before load under it.
    @Test func theSameTPMAfterARestartSignsWithTheOldKeys() throws {
        let key = try tpm.makeES256Key()
        let state = TemporaryDirectory(prefix: "authkeyd-tpm")
        var restarted: SoftwareTPM? = try SoftwareTPM(state: state)
        let before = try TPM(tcti: restarted!.tcti)
        let keyOfThatTPM = try before.makeES256Key()
        restarted?.stop()
        restarted = nil
        let after = try SoftwareTPM(state: state)
        let tpmAfter = try TPM(tcti: after.tcti)
        #expect(try signs(keyOfThatTPM, on: tpmAfter))
        #expect(throws: TPMError.self) { try tpmAfter.sign(digest: SHA256.hash([1]), with: key) }
    }

    @Test func anAlteredPrivatePartIsRefusedByTheTPM() throws {
        let key = try tpm.makeES256Key()
        var privatePart = key.privatePart
        privatePart[privatePart.count - 1] ^= 0x01
        let altered = try WrappedKey(publicPart: key.publicPart, privatePart: privatePart)
        #expect {
            try tpm.sign(digest: SHA256.hash([1]), with: altered)
        } throws: { error in
            (error as? TPMError)?.isForeignBlob == true
        }
    }

    /// A blob read back is checked before the TPM sees it: bytes that are
    /// not one marshalled structure, and keys not of authkeyd's template.
    @Test func bytesThatAreNotOneOfOurKeysAreRefusedWhenRead() throws {
        let key = try tpm.makeES256Key()
        #expect(throws: TPMError.self) { try WrappedKey(publicPart: [], privatePart: key.privatePart) }
        #expect(throws: TPMError.self) { try WrappedKey(publicPart: key.publicPart + [0], privatePart: key.privatePart) }
        #expect(throws: TPMError.self) { try WrappedKey(publicPart: key.publicPart, privatePart: Array(key.privatePart.dropLast())) }
        #expect(throws: TPMError.self) {
            try WrappedKey(publicPart: key.publicPart, privatePart: [UInt8](repeating: 0xFF, count: 4096))
        }
        // TPM2B_PUBLIC: size (2), type (2), nameAlg (2), objectAttributes
        // (4, big-endian): clear noDA (bit 10), and the key is not ours.
        var publicPart = key.publicPart
        publicPart[8] ^= 0x04
        #expect(throws: TPMError.self) { try WrappedKey(publicPart: publicPart, privatePart: key.privatePart) }
    }

    @Test func aDigestOfAnotherLengthIsRefused() throws {
        let key = try tpm.makeES256Key()
        #expect(throws: TPMError.self) { try tpm.sign(digest: [1, 2, 3], with: key) }
    }

    @Test func noTPMAtTheTCTIIsAClearError() {
        #expect {
            try TPM(tcti: "swtpm:path=/nonexistent/authkeyd-test-socket")
        } throws: { error in
            guard let error = error as? TPMError else { return false }
            return error.call.contains("TCTI") || error.call.contains("Esys_Initialize")
        }
    }
}
