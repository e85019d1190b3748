@testable import AuthDaemon
import CBOR
import Crypto
import FIDO2
import Testing

/// The COSE_Keys the daemon builds from libfido2's form of a listed
/// credential's public key. ES256 and EdDSA are also compared with real
/// registrations (CredentialListingTests); the virtual key makes no RS256
/// credentials, so RS256 is checked here, with libcrypto taking the key.
@Suite struct COSEKeyTests {
    @Test func anRS256KeyBecomesAnRSACOSEKeyThatLibcryptoTakes() throws {
        var modulus = secureRandomBytes(256)
        modulus[0] |= 0x80
        modulus[255] |= 0x01
        let exponent: [UInt8] = [0x01, 0x00, 0x01]
        let encoded = try #require(COSEKey.encoded(modulus + exponent, algorithm: .rs256))
        let key = try #require(try CBOR.decode(encoded).mapValue)
        #expect(key.count == 4)
        #expect(key[1] == 3 && key[3] == -257)
        #expect(key[-1]?.bytesValue == modulus && key[-2]?.bytesValue == exponent)
        #expect(throws: Never.self) { try RSA.PublicKey(modulus: modulus, exponent: exponent) }
    }

    @Test func anES256KeySplitsIntoXAndY() throws {
        let point = try P256.PrivateKey().publicKey
        let encoded = try #require(COSEKey.encoded(point.x + point.y, algorithm: .es256))
        let key = try #require(try CBOR.decode(encoded).mapValue)
        #expect(key[1] == 2 && key[3] == -7 && key[-1] == 1)
        #expect(key[-2]?.bytesValue == point.x && key[-3]?.bytesValue == point.y)
    }

    @Test func aKeyOfTheWrongLengthOrAnUnknownAlgorithmHasNone() {
        #expect(COSEKey.encoded([UInt8](repeating: 1, count: 63), algorithm: .es256) == nil)
        #expect(COSEKey.encoded([UInt8](repeating: 1, count: 31), algorithm: .edDSA) == nil)
        #expect(COSEKey.encoded([UInt8](repeating: 1, count: 96), algorithm: .es384) == nil)
        #expect(COSEKey.encoded([UInt8](repeating: 1, count: 64), algorithm: nil) == nil)
    }
}
