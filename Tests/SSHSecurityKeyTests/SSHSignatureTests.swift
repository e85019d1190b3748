import Crypto
import TestSupport
import SSHSecurityKey
import Testing

/// The key's signatures as OpenSSH takes them back from sk_sign.
@Suite struct SSHSignatureTests {
    /// r and s, re-encoded as DER by the test, must give back the key's
    /// signature byte for byte, and it verifies with the key: nothing of
    /// either integer is lost or added, over many signatures (some with a
    /// high bit, which DER pads with a zero that OpenSSH must not see).
    @Test func ecdsaSignaturesSplitIntoTheirIntegers() throws {
        let key = try P256.PrivateKey()
        var sawPaddedInteger = false
        for round in 0..<64 {
            let message = Array("message \(round)".utf8)
            let der = try key.signature(for: message)
            let signature = try SSHSignature(keySignature: der, algorithm: .ecdsaP256)
            #expect(signature.r.first != 0 && signature.s.first != 0, "no leading zero, as BN_bn2bin gives")
            #expect(signature.r.count <= 32 && signature.s.count <= 32)
            #expect(derECDSASignature(r: signature.r, s: signature.s) == der)
            #expect(key.publicKey.isValidSignature(derECDSASignature(r: signature.r, s: signature.s), for: message))
            sawPaddedInteger = sawPaddedInteger || der[4] == 0
        }
        #expect(sawPaddedInteger, "64 signatures include one whose r has its high bit set")
    }

    @Test(arguments: [
        ("empty", [UInt8]()),
        ("not a SEQUENCE", [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
        ("a negative r", [0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01]),
        ("bytes after the SEQUENCE", [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00]),
        ("a length past the end", [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
        ("one INTEGER", [0x30, 0x03, 0x02, 0x01, 0x01]),
    ] as [(String, [UInt8])])
    func malformedECDSASignaturesAreRefused(_ name: String, _ der: [UInt8]) {
        #expect(throws: ProviderError.self, "\(name)") { try SSHSignature(keySignature: der, algorithm: .ecdsaP256) }
    }

    @Test func ed25519SignaturesPassWholeInR() throws {
        let bytes = (0..<64).map { UInt8($0) }
        let signature = try SSHSignature(keySignature: bytes, algorithm: .ed25519)
        #expect(signature.r == bytes)
        #expect(signature.s.isEmpty)
        #expect(throws: ProviderError.self) { try SSHSignature(keySignature: Array(bytes.dropLast()), algorithm: .ed25519) }
    }
}
