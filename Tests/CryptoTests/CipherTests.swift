import Crypto
import TestSupport
import Testing

@Suite struct CipherTests {
    /// NIST SP 800-38A F.2.5, CBC-AES256.Encrypt, first block.
    @Test func aesCBCKnownAnswer() throws {
        let key = bytes(fromHex: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
        let iv = bytes(fromHex: "000102030405060708090a0b0c0d0e0f")
        let plain = bytes(fromHex: "6bc1bee22e409f96e93d7e117393172a")
        let cipher = try AES256.cbcEncrypt(plain, key: key, iv: iv)
        #expect(hex(cipher) == "f58c4c04d6e5f1ba779eabfb5f7bfbd6")
        #expect(try AES256.cbcDecrypt(cipher, key: key, iv: iv) == plain)
    }

    @Test func aesCBCRefusesPartialBlocks() {
        #expect(throws: CryptoError.self) {
            try AES256.cbcEncrypt([1, 2, 3], key: [UInt8](repeating: 0, count: 32), iv: [UInt8](repeating: 0, count: 16))
        }
    }

    @Test func gcmRoundTripAndTamperDetection() throws {
        let key = secureRandomBytes(32), nonce = secureRandomBytes(12)
        let sealed = try AES256.gcmSeal(Array("credential".utf8), key: key, nonce: nonce, authenticating: [9])
        #expect(sealed.count == 10 + 16)
        #expect(try AES256.gcmOpen(sealed, key: key, nonce: nonce, authenticating: [9]) == Array("credential".utf8))
        var tampered = sealed
        tampered[0] ^= 1
        #expect(throws: CryptoError.self) { try AES256.gcmOpen(tampered, key: key, nonce: nonce, authenticating: [9]) }
        #expect(throws: CryptoError.self) { try AES256.gcmOpen(sealed, key: key, nonce: nonce, authenticating: [8]) }
    }
}
