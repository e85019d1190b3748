import Crypto
import TestSupport
import Testing
import TPM2

/// Secrets the TPM keeps (sealed data objects): how the platform
/// authenticator's own secrets (the key that seals its credential ids)
/// stay bound to its TPM while their bytes sit in the state directory.
@Suite(.serialized) final class SealedSecretTests {
    let tpmUnderTest: TPMUnderTest
    var tpm: TPM { tpmUnderTest.tpm }

    init() throws { tpmUnderTest = try TPMUnderTest() }

    @Test func aSealedSecretComesBackFromItsTPM() throws {
        let secret = secureRandomBytes(32)
        let sealed = try tpm.seal(secret)
        #expect(try tpm.unseal(sealed) == secret)
        // Its bytes, as a file holds them, read back.
        let readBack = try SealedSecret(publicPart: sealed.publicPart, privatePart: sealed.privatePart)
        #expect(try tpm.unseal(readBack) == secret)
        // Nothing of the secret in the bytes kept outside the TPM.
        let kept = sealed.publicPart + sealed.privatePart
        #expect(!kept.windows(ofCount: secret.count).contains { Array($0) == secret })
    }

    @Test func theLongestSecretFitsAndALongerOneIsRefused() throws {
        let longest = secureRandomBytes(SealedSecret.maxSecretBytes)
        #expect(try tpm.unseal(try tpm.seal(longest)) == longest)
        #expect(throws: TPMError.self) { try tpm.seal(secureRandomBytes(SealedSecret.maxSecretBytes + 1)) }
    }

    @Test func anotherTPMCannotUnsealIt() throws {
        let sealed = try tpm.seal(secureRandomBytes(32))
        let other = try SoftwareTPM()
        let otherTPM = try TPM(tcti: other.tcti)
        #expect {
            try otherTPM.unseal(sealed)
        } throws: { error in
            (error as? TPMError)?.isForeignBlob == true
        }
    }

    @Test func anAlteredPrivatePartIsRefused() throws {
        let sealed = try tpm.seal(secureRandomBytes(32))
        var privatePart = sealed.privatePart
        privatePart[privatePart.count / 2] ^= 0x80
        let altered = try SealedSecret(publicPart: sealed.publicPart, privatePart: privatePart)
        #expect {
            try tpm.unseal(altered)
        } throws: { error in
            (error as? TPMError)?.isForeignBlob == true
        }
    }

    /// A key is not a sealed secret, nor a sealed secret a key: each is
    /// checked against its own template when read back.
    @Test func aKeyAndASealedSecretAreNotTakenForEachOther() throws {
        let key = try tpm.makeES256Key()
        let sealed = try tpm.seal(secureRandomBytes(32))
        #expect(throws: TPMError.self) { try SealedSecret(publicPart: key.publicPart, privatePart: key.privatePart) }
        #expect(throws: TPMError.self) { try WrappedKey(publicPart: sealed.publicPart, privatePart: sealed.privatePart) }
    }
}

extension Array {
    /// Every run of `count` consecutive elements.
    fileprivate func windows(ofCount count: Int) -> [ArraySlice<Element>] {
        guard count > 0, count <= self.count else { return [] }
        return (0...(self.count - count)).map { self[$0..<($0 + count)] }
    }
}
