import CBOR
import Crypto
import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// Ed25519 credentials on the virtual key, driven and checked through
/// libfido2 (its `fido_cred_verify`, `fido_cred_verify_self` and
/// `fido_assert_verify` with an `eddsa_pk_t`).
@Suite struct EdDSATests {
    func edDSARequest(residentKey: Bool = false) -> MakeCredentialRequest {
        var request = registrationRequest(residentKey: residentKey)
        request.algorithm = .edDSA
        return request
    }

    @Test func getInfoListsES256ThenEdDSAUnlessRestricted() throws {
        #expect(try makeKey().openDevice().info().algorithms == [.init(type: "public-key", cose: -7), .init(type: "public-key", cose: -8)])
        let restricted = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "algorithms=es256"))
        #expect(try restricted.openDevice().info().algorithms.map(\.cose) == [-7])
        let edOnly = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "algorithms=eddsa"))
        #expect(try edOnly.openDevice().info().algorithms.map(\.cose) == [-8])
        #expect(throws: VirtualKeyError.self) { try VirtualKeyConfiguration(spec: "algorithms=rs256") }
        #expect(throws: VirtualKeyError.self) { try VirtualKeyConfiguration(spec: "algorithms=") }
        #expect(throws: VirtualKeyError.self) { try VirtualKeyConfiguration(spec: "algorithms=es256+es256") }
        #expect(try VirtualKeyConfiguration(spec: "algorithms=eddsa+es256").algorithms == [.edDSA, .es256])
    }

    @Test func packedEdDSACredentialAndAssertionVerify() throws {
        let device = try makeKey().openDevice()
        let request = edDSARequest()
        let credential = try device.makeCredential(request)
        #expect(credential.algorithm == -8)
        #expect(credential.publicKey.count == 32)
        #expect(credential.format == "packed")
        try credential.verify()

        // The attested credential data carries an OKP COSE_Key; the packed
        // statement is signed by the ES256 attestation key.
        let parsed = try ParsedAuthenticatorData(credential.authenticatorData)
        let coseKey = try #require(parsed.credentialPublicKey?.mapValue)
        #expect(coseKey[1] == 1 && coseKey[3] == -8 && coseKey[-1] == 6)
        #expect(coseKey[-2]?.bytesValue == credential.publicKey)
        let statement = try #require(try CBOR.decode(credential.attestationStatementCBOR).mapValue)
        #expect(statement["alg"] == -7)

        let clientDataHash = randomHash()
        var assertionRequest = assertionRequest(allow: [credential.credentialID])
        assertionRequest.clientData = .hash(clientDataHash)
        let assertion = try device.getAssertion(assertionRequest)
        try assertion.verify(publicKey: credential.publicKey, algorithm: .edDSA)
        let statementSigned = assertion.statement(at: 0)
        #expect(statementSigned.signature.count == 64)
        // An independent check: OpenSSL's Ed25519 over authData ‖ clientDataHash.
        let publicKey = try Ed25519.PublicKey(rawRepresentation: credential.publicKey)
        #expect(publicKey.isValidSignature(statementSigned.signature, for: statementSigned.authenticatorData + clientDataHash))

        // The same signature for another challenge, or checked as ES256, fails.
        var other = assertionRequest
        other.clientData = .hash(randomHash())
        let forged = try Assertion.forVerification(
            request: other, authenticatorData: statementSigned.authenticatorData, signature: statementSigned.signature)
        #expect(throws: FIDO2Error.self) { try forged.verify(publicKey: credential.publicKey, algorithm: .edDSA) }
        var tampered = statementSigned.signature
        tampered[0] ^= 0x80
        let tamperedAssertion = try Assertion.forVerification(
            request: assertionRequest, authenticatorData: statementSigned.authenticatorData, signature: tampered)
        #expect(throws: FIDO2Error.self) { try tamperedAssertion.verify(publicKey: credential.publicKey, algorithm: .edDSA) }
        let genuine = try Assertion.forVerification(
            request: assertionRequest, authenticatorData: statementSigned.authenticatorData, signature: statementSigned.signature)
        try genuine.verify(publicKey: credential.publicKey, algorithm: .edDSA)
    }

    @Test func selfAttestationIsSignedByTheEdDSACredentialKey() throws {
        let device = try makeKey { $0.attestation = .selfAttestation }.openDevice()
        let credential = try device.makeCredential(edDSARequest())
        #expect(credential.attestationCertificate.isEmpty)
        let statement = try #require(try CBOR.decode(credential.attestationStatementCBOR).mapValue)
        #expect(statement["alg"] == -8)
        try credential.verifySelf()
        let publicKey = try Ed25519.PublicKey(rawRepresentation: credential.publicKey)
        #expect(publicKey.isValidSignature(credential.attestationSignature, for: credential.authenticatorData + credential.clientDataHash))
    }

    @Test func aKeyWithoutEdDSARefusesItAndES256StaysTheDefault() throws {
        let restricted = try makeKey { $0.algorithms = [.es256] }.openDevice()
        #expect(throws: FIDO2Error.unsupportedAlgorithm) { try restricted.makeCredential(edDSARequest()) }
        let es256 = try restricted.makeCredential(registrationRequest())
        #expect(es256.algorithm == -7 && es256.publicKey.count == 64)
        let edOnly = try makeKey { $0.algorithms = [.edDSA] }.openDevice()
        #expect(throws: FIDO2Error.unsupportedAlgorithm) { try edOnly.makeCredential(registrationRequest()) }
    }

    /// A discoverable EdDSA credential: found without an allow list, signed
    /// with its own algorithm, and listed by credential management with
    /// its OKP key; it survives a restart from the state file.
    @Test func discoverableEdDSACredentialsAreListedAndSurviveARestart() throws {
        let directory = TemporaryDirectory()
        let state = directory.file("key.state")
        let configuration = try VirtualKeyConfiguration(spec: "pin=1234,state=\(state)")
        let credential = try VirtualKey(configuration: configuration).openDevice().makeCredential(edDSARequest(residentKey: true), pin: "1234")
        let es256 = try VirtualKey(configuration: configuration).openDevice().makeCredential(
            registrationRequest(userID: [9], userName: "bob", residentKey: true), pin: "1234")

        let device = try VirtualKey(configuration: configuration).openDevice()
        let stored = try device.storedCredentials(relyingPartyID: "example.org", pin: "1234")
        #expect(Set(stored.map(\.publicKey)) == [credential.publicKey, es256.publicKey])
        let assertion = try device.getAssertion(assertionRequest(), pin: "1234")
        #expect(assertion.count == 2)
        for statement in assertion.statements {
            let index = assertion.statements.firstIndex(of: statement)!
            if statement.credentialID == credential.credentialID {
                try assertion.verify(at: index, publicKey: credential.publicKey, algorithm: .edDSA)
            } else {
                try assertion.verify(at: index, publicKey: es256.publicKey, algorithm: .es256)
            }
        }
    }
}
