import Crypto
import Testing

@Suite struct P256Tests {
    @Test func signatureVerifiesAndTamperingFails() throws {
        let key = try P256.PrivateKey()
        let message = Array("authenticator data".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.first == 0x30, "ES256 signatures are DER SEQUENCEs")
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0]))
        #expect(!(try P256.PrivateKey()).publicKey.isValidSignature(signature, for: message))
    }

    @Test func rawRepresentationRestoresTheSameKey() throws {
        let key = try P256.PrivateKey()
        let restored = try P256.PrivateKey(rawRepresentation: key.rawRepresentation)
        #expect(restored.publicKey == key.publicKey)
        let signature = try restored.signature(for: [1, 2, 3])
        #expect(key.publicKey.isValidSignature(signature, for: [1, 2, 3]))
    }

    @Test func signingWithABareScalarVerifiesWithTheKeyPair() throws {
        let key = try P256.PrivateKey()
        let signature = try P256.PrivateKey.signature(for: [4, 5, 6], scalar: key.rawRepresentation)
        #expect(key.publicKey.isValidSignature(signature, for: [4, 5, 6]))
        #expect(!key.publicKey.isValidSignature(signature, for: [4, 5, 7]))
    }

    @Test func outOfRangeScalarsAreRefused() {
        #expect(throws: CryptoError.self) { try P256.PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.self) { try P256.PrivateKey(rawRepresentation: [UInt8](repeating: 0xFF, count: 32)) }
        #expect(throws: CryptoError.self) { try P256.PrivateKey(rawRepresentation: [1, 2, 3]) }
    }

    @Test func ecdhAgreesOnBothSides() throws {
        let a = try P256.PrivateKey(), b = try P256.PrivateKey()
        let ab = try a.sharedSecret(with: b.publicKey)
        #expect(ab.count == 32)
        #expect(ab == (try b.sharedSecret(with: a.publicKey)))
    }

    @Test func pointsOffTheCurveAreRefused() throws {
        let key = try P256.PrivateKey()
        var y = key.publicKey.y
        y[31] ^= 1
        #expect(throws: CryptoError.self) { try P256.PublicKey(x: key.publicKey.x, y: y) }
        #expect(try P256.PublicKey(x: key.publicKey.x, y: key.publicKey.y) == key.publicKey)
    }

    @Test func certificateChainVerifies() throws {
        let caKey = try P256.PrivateKey()
        let caSubject = [(attribute: "C", value: "US"), (attribute: "O", value: "authkeyd"), (attribute: "CN", value: "Test CA")]
        let ca = try CertificateBuilder(subject: caSubject, serialNumber: 1, isCertificateAuthority: true)
            .build(publicKey: caKey.publicKey, signer: caKey)
        let leafKey = try P256.PrivateKey()
        let leaf = try CertificateBuilder(
            subject: [("C", "US"), ("O", "authkeyd"), ("OU", "Authenticator Attestation"), ("CN", "leaf")],
            issuer: caSubject, serialNumber: 2, isCertificateAuthority: false, aaguid: [UInt8](repeating: 7, count: 16)
        ).build(publicKey: leafKey.publicKey, signer: caKey)
        let summary = try CertificateSummary(der: leaf)
        #expect(summary.subject.contains("OU=Authenticator Attestation"))
        #expect(summary.issuer.contains("CN=Test CA"))
        #expect(summary.publicKey == leafKey.publicKey)
        #expect(CertificateSummary.isSigned(leaf, by: caKey.publicKey))
        #expect(CertificateSummary.isSigned(ca, by: caKey.publicKey))
        #expect(!CertificateSummary.isSigned(leaf, by: leafKey.publicKey))
    }
}
