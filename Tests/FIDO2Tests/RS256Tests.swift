import CBOR
import Crypto
import FIDO2
import Foundation
import TestSupport
import Testing

/// RS256, which the virtual key does not make but other keys do: a key and
/// signatures from the openssl command, put together as a key would send
/// them, and checked through libfido2 (`rs256_pk_t`), and the form
/// `Credential.publicKey` gives an RS256 key (what the daemon turns into
/// `response.publicKey`).
@Suite struct RS256Tests {
    let directory = TemporaryDirectory()

    /// A 2048-bit key made by openssl: the PEM file, the modulus and the exponent.
    func opensslKey() throws -> (file: String, modulus: [UInt8], exponent: [UInt8]) {
        let file = directory.file("rsa.pem")
        let made = try run("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", file])
        try #require(made.status == 0, "\(made.standardError)")
        let line = try run("/usr/bin/openssl", ["rsa", "-in", file, "-noout", "-modulus"]).standardOutput
        return (file, bytes(fromHex: String(line.drop { $0 != "=" }.dropFirst().prefix { $0 != "\n" })), [0x01, 0x00, 0x01])
    }

    /// RSASSA-PKCS1-v1_5 over SHA-256, by openssl.
    func opensslSignature(_ message: [UInt8], key: String) throws -> [UInt8] {
        let input = directory.file("message"), output = directory.file("signature")
        try Data(message).write(to: URL(fileURLWithPath: input))
        let signed = try run("/usr/bin/openssl", ["dgst", "-sha256", "-sign", key, "-out", output, input])
        try #require(signed.status == 0, "\(signed.standardError)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    @Test func rs256AssertionsVerifyAndTheCredentialKeyIsModulusThenExponent() throws {
        try #require(isInstalled("openssl"), "needs the openssl command")
        let key = try opensslKey()
        #expect(key.modulus.count == 256)
        let rpIDHash = SHA256.hash(Array("example.org".utf8))

        // A registration's authenticator data with an RSA COSE_Key (kty 3).
        let coseKey = CBOR.map([1: 3, 3: -257, -1: .bytes(key.modulus), -2: .bytes(key.exponent)]).encoded()
        let credentialID: [UInt8] = Array(repeating: 0xC1, count: 16)
        let registrationData = rpIDHash + [0x41, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 16)
            + [0, UInt8(credentialID.count)] + credentialID + coseKey
        var request = registrationRequest()
        request.algorithm = .rs256
        let clientDataHash = randomHash()
        request.clientData = .hash(clientDataHash)
        let signature = try opensslSignature(registrationData + clientDataHash, key: key.file)
        let credential = try Credential.forVerification(
            request: request, format: "packed", authenticatorData: registrationData, attestationCertificate: nil,
            signature: signature)
        #expect(credential.algorithm == -257 && credential.coseAlgorithm == .rs256)
        #expect(credential.publicKey == key.modulus + key.exponent)
        try credential.verifySelf()
        let publicKeyDER = try run("/usr/bin/openssl", ["pkey", "-in", key.file, "-pubout", "-outform", "DER", "-out", directory.file("public.der")])
        #expect(publicKeyDER.status == 0)
        let rebuilt = try RSA.PublicKey(modulus: Array(credential.publicKey.prefix(256)), exponent: Array(credential.publicKey.suffix(3)))
        #expect(rebuilt.derRepresentation == Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("public.der")))))

        // An assertion signed by the same key verifies with it, and not
        // for another challenge.
        let assertionData = rpIDHash + [0x01, 0, 0, 0, 2]
        let assertionRequest = assertionRequest()
        guard case .hash(let assertionHash) = assertionRequest.clientData else { return }
        let assertionSignature = try opensslSignature(assertionData + assertionHash, key: key.file)
        let assertion = try Assertion.forVerification(
            request: assertionRequest, authenticatorData: assertionData, signature: assertionSignature)
        try assertion.verify(publicKey: credential.publicKey, algorithm: .rs256)
        #expect(throws: FIDO2Error.self) { try assertion.verify(publicKey: key.modulus, algorithm: .rs256) }
        let other = try Assertion.forVerification(
            request: GetAssertionRequest(relyingPartyID: "example.org", clientData: .hash(randomHash())),
            authenticatorData: assertionData, signature: assertionSignature)
        #expect(throws: FIDO2Error.self) { try other.verify(publicKey: credential.publicKey, algorithm: .rs256) }
    }
}
