import CBOR
import Crypto
import SSHSecurityKey
import Testing

/// COSE keys as OpenSSH stores public keys.
@Suite struct SSHPublicKeyTests {
    @Test func aP256KeyIsItsUncompressedPoint() throws {
        let key = try P256.PrivateKey().publicKey
        let cose = CBOR.map([1: 2, 3: -7, -1: 1, -2: .bytes(key.x), -3: .bytes(key.y)])
        #expect(try SSHPublicKey.bytes(fromCOSE: cose, algorithm: .ecdsaP256) == key.x962Representation)
    }

    @Test func anEd25519KeyIsItsRawBytes() throws {
        let key = try Ed25519.PrivateKey().publicKey
        let cose = CBOR.map([1: 1, 3: -8, -1: 6, -2: .bytes(key.rawRepresentation)])
        #expect(try SSHPublicKey.bytes(fromCOSE: cose, algorithm: .ed25519) == key.rawRepresentation)
    }

    @Test func aKeyOfAnotherKindIsRefused() {
        let x = [UInt8](repeating: 1, count: 32)
        let p384 = CBOR.map([1: 2, 3: -7, -1: 2, -2: .bytes(x), -3: .bytes(x)])
        let x25519 = CBOR.map([1: 1, 3: -8, -1: 4, -2: .bytes(x)])
        let shortY = CBOR.map([1: 2, 3: -7, -1: 1, -2: .bytes(x), -3: .bytes([1])])
        #expect(throws: ProviderError.self) { try SSHPublicKey.bytes(fromCOSE: p384, algorithm: .ecdsaP256) }
        #expect(throws: ProviderError.self) { try SSHPublicKey.bytes(fromCOSE: x25519, algorithm: .ed25519) }
        #expect(throws: ProviderError.self) { try SSHPublicKey.bytes(fromCOSE: shortY, algorithm: .ecdsaP256) }
        #expect(throws: ProviderError.self) { try SSHPublicKey.bytes(fromCOSE: .bytes(x), algorithm: .ed25519) }
    }
}

/// OpenSSH's key types and their COSE algorithms, both ways.
@Suite struct SSHKeyAlgorithmTests {
    @Test func eachKeyTypeIsItsCOSEAlgorithmAndBack() {
        #expect(SSHKeyAlgorithm(rawValue: 0)?.coseAlgorithm == -7)
        #expect(SSHKeyAlgorithm(rawValue: 1)?.coseAlgorithm == -8)
        #expect(SSHKeyAlgorithm(coseAlgorithm: -7) == .ecdsaP256)
        #expect(SSHKeyAlgorithm(coseAlgorithm: -8) == .ed25519)
        #expect(SSHKeyAlgorithm(coseAlgorithm: -257) == nil, "RS256: OpenSSH has no -sk key for it")
        #expect(SSHKeyAlgorithm(rawValue: 2) == nil)
    }
}
