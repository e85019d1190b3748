import Crypto
import TestSupport
import Testing

/// Known-answer tests from the standards, so that a wrong wrapper shows up here
/// and not as a signature libfido2 refuses.
@Suite struct DigestTests {
    @Test func sha256OfABC() {
        #expect(hex(SHA256.hash(Array("abc".utf8)))
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hmacRFC4231Case2() {
        let mac = HMACSHA256.authenticationCode(
            for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func hkdfRFC5869Case1() throws {
        let okm = try HKDFSHA256.deriveKey(
            inputKeyMaterial: [UInt8](repeating: 0x0B, count: 22),
            salt: bytes(fromHex: "000102030405060708090a0b0c"),
            info: bytes(fromHex: "f0f1f2f3f4f5f6f7f8f9"),
            outputByteCount: 42)
        #expect(hex(okm)
            == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    /// RFC 5869 A.2: long inputs, an output of several blocks.
    @Test func hkdfRFC5869Case2() throws {
        let okm = try HKDFSHA256.deriveKey(
            inputKeyMaterial: Array(0x00...0x4F), salt: Array(0x60...0xAF), info: Array(0xB0...0xFF),
            outputByteCount: 82)
        #expect(hex(okm)
            == "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
            + "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
            + "cc30c58179ec3e87c14c01d5c1f3434f1d87")
    }

    /// RFC 5869 A.3: no salt (a zero salt) and no info.
    @Test func hkdfRFC5869Case3() throws {
        let okm = try HKDFSHA256.deriveKey(
            inputKeyMaterial: [UInt8](repeating: 0x0B, count: 22), salt: [], info: [], outputByteCount: 42)
        #expect(hex(okm)
            == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
        let zeroSalt = try HKDFSHA256.deriveKey(
            inputKeyMaterial: [UInt8](repeating: 0x0B, count: 22), salt: [UInt8](repeating: 0, count: 32), info: [],
            outputByteCount: 42)
        #expect(zeroSalt == okm, "an empty salt is HashLen zero bytes")
    }

    /// RFC 5869 caps the output at 255 blocks; OpenSSL refuses more, and so do we.
    @Test func hkdfRefusesMoreThan255Blocks() throws {
        let error = #expect(throws: CryptoError.self) {
            try HKDFSHA256.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: 255 * 32 + 1)
        }
        #expect(error?.operation == "EVP_KDF_derive(HKDF)")
        #expect(try HKDFSHA256.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: 255 * 32).count == 255 * 32)
    }

    @Test func constantTimeEqualsComparesContentAndLength() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([], []))
    }

    @Test func randomBytesDiffer() {
        let a = secureRandomBytes(32), b = secureRandomBytes(32)
        #expect(a.count == 32)
        #expect(a != b)
    }
}

