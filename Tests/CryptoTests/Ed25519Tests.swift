import Crypto
import SystemKit
import Foundation
import TestSupport
import Testing

@Suite struct Ed25519Tests {
    /// RFC 8032 §7.1, TEST 1 (the empty message) and TEST 2 (one byte).
    static let vectors: [(seed: String, publicKey: String, message: String, signature: String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
         "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
         "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ]

    @Test(arguments: 0..<2) func rfc8032TestVectors(_ index: Int) throws {
        let vector = Self.vectors[index]
        let key = try Ed25519.PrivateKey(rawRepresentation: bytes(fromHex: vector.seed))
        #expect(hex(key.publicKey.rawRepresentation) == vector.publicKey)
        let message = bytes(fromHex: vector.message)
        let signature = try key.signature(for: message)
        #expect(hex(signature) == vector.signature, "Ed25519 signatures are deterministic")
        let publicKey = try Ed25519.PublicKey(rawRepresentation: bytes(fromHex: vector.publicKey))
        #expect(publicKey.isValidSignature(bytes(fromHex: vector.signature), for: message))
    }

    @Test func tamperedSignaturesAndMessagesAreRefused() throws {
        let key = try Ed25519.PrivateKey()
        let message = Array("authenticator data".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        var tampered = signature
        tampered[10] ^= 0x01
        #expect(!key.publicKey.isValidSignature(tampered, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0]))
        #expect(!key.publicKey.isValidSignature(Array(signature.prefix(63)), for: message))
        #expect(!(try Ed25519.PrivateKey()).publicKey.isValidSignature(signature, for: message))
    }

    @Test func theSeedRestoresTheSameKey() throws {
        let key = try Ed25519.PrivateKey()
        var seed = key.rawRepresentation
        defer { zeroSecret(&seed) }
        let restored = try Ed25519.PrivateKey(rawRepresentation: seed)
        #expect(restored.publicKey == key.publicKey)
        #expect(key.publicKey.isValidSignature(try restored.signature(for: [1, 2, 3]), for: [1, 2, 3]))
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(rawRepresentation: [1, 2, 3]) }
        #expect(throws: CryptoError.self) { try Ed25519.PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 31)) }
    }

    /// RFC 8410 §4: the SubjectPublicKeyInfo is a fixed 12-byte prefix
    /// (SEQUENCE, AlgorithmIdentifier id-Ed25519 = 1.3.101.112, BIT STRING)
    /// and the 32-byte key; OpenSSL's own command reads it back.
    @Test func subjectPublicKeyInfoIsRFC8410s() throws {
        let key = try Ed25519.PrivateKey()
        let der = key.publicKey.derRepresentation
        #expect(hex(Array(der.prefix(12))) == "302a300506032b6570032100")
        #expect(Array(der.dropFirst(12)) == key.publicKey.rawRepresentation)
        try #require(isInstalled("openssl"), "needs the openssl command")
        let directory = TemporaryDirectory()
        let file = directory.file("key.der")
        try Data(der).write(to: URL(fileURLWithPath: file))
        let parsed = try run("/usr/bin/openssl", ["pkey", "-pubin", "-inform", "DER", "-in", file, "-noout", "-text"])
        #expect(parsed.status == 0, "\(parsed.standardError)")
        #expect(parsed.standardOutput.contains("ED25519 Public-Key"))
    }
}

@Suite struct RSATests {
    /// A key made, and a message signed, by the openssl command; the
    /// public key rebuilt from its modulus and exponent gives OpenSSL's DER
    /// and accepts OpenSSL's RS256 signature.
    @Test func aPublicKeyFromModulusAndExponentMatchesOpenSSLs() throws {
        try #require(isInstalled("openssl"), "needs the openssl command")
        let directory = TemporaryDirectory()
        let key = directory.file("rsa.pem"), message = directory.file("message"), signature = directory.file("sig")
        let publicDER = directory.file("public.der")
        #expect(try run("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key]).status == 0)
        try Data("authenticator data and client data hash".utf8).write(to: URL(fileURLWithPath: message))
        #expect(try run("/usr/bin/openssl", ["dgst", "-sha256", "-sign", key, "-out", signature, message]).status == 0)
        #expect(try run("/usr/bin/openssl", ["pkey", "-in", key, "-pubout", "-outform", "DER", "-out", publicDER]).status == 0)
        let modulusLine = try run("/usr/bin/openssl", ["rsa", "-in", key, "-noout", "-modulus"]).standardOutput
        let modulus = bytes(fromHex: String(modulusLine.drop { $0 != "=" }.dropFirst().prefix { $0 != "\n" }))
        #expect(modulus.count == 256)

        let publicKey = try RSA.PublicKey(modulus: modulus, exponent: [0x01, 0x00, 0x01])
        #expect(publicKey.derRepresentation == Array(try Data(contentsOf: URL(fileURLWithPath: publicDER))))
        let signed = Array(try Data(contentsOf: URL(fileURLWithPath: signature)))
        let text = Array(try Data(contentsOf: URL(fileURLWithPath: message)))
        #expect(publicKey.isValidSignature(signed, for: text))
        #expect(!publicKey.isValidSignature(signed, for: text + [0]))
        #expect(throws: CryptoError.self) { try RSA.PublicKey(modulus: [1, 2, 3], exponent: [3]) }
    }
}
