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

    @Test func hkdfRFC5869Case1() {
        let okm = HKDFSHA256.deriveKey(
            inputKeyMaterial: [UInt8](repeating: 0x0B, count: 22),
            salt: bytes(fromHex: "000102030405060708090a0b0c"),
            info: bytes(fromHex: "f0f1f2f3f4f5f6f7f8f9"),
            outputByteCount: 42)
        #expect(hex(okm)
            == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
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

