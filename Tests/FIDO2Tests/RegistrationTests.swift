import CBOR
import Crypto
import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// makeCredential through libfido2, checked with libfido2's own verifiers.
@Suite struct RegistrationTests {
    @Test func packedAttestationVerifiesWithItsCertificateChain() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        let request = registrationRequest()
        let credential = try device.makeCredential(request)
        #expect(credential.format == "packed")
        try credential.verify()
        #expect(credential.flags.contains([.userPresent, .attestedCredentialData]))
        #expect(!credential.flags.contains(.userVerified))
        #expect(credential.aaguid == VirtualKeyConfiguration.defaultAAGUID)
        #expect(credential.publicKey.count == 64)
        #expect(credential.relyingPartyID == "example.org")

        // x5c[0] is the attestation certificate WebAuthn §8.2.1 describes.
        let certificate = try CertificateSummary(der: credential.attestationCertificate)
        #expect(certificate.subject.contains("OU=Authenticator Attestation"))
        #expect(certificate.issuer.contains("CN=authkeyd Virtual Key Attestation CA"))
        let statement = try #require(try CBOR.decode(credential.attestationStatementCBOR).mapValue)
        let chain = (statement["x5c"]?.arrayValue ?? []).compactMap { $0.bytesValue }
        #expect(chain.count == 2)
        let ca = try CertificateSummary(der: chain[1])
        #expect(CertificateSummary.isSigned(chain[0], by: ca.publicKey))
        #expect(CertificateSummary.isSigned(chain[1], by: ca.publicKey))
    }

    @Test func tamperedRegistrationsFailVerification() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        let request = registrationRequest()
        let credential = try device.makeCredential(request)
        func verify(authenticatorData: [UInt8], signature: [UInt8], request: MakeCredentialRequest) throws {
            try Credential.forVerification(
                request: request, format: "packed", authenticatorData: authenticatorData,
                attestationCertificate: credential.attestationCertificate, signature: signature
            ).verify()
        }
        // The untouched parts verify when reassembled...
        try verify(authenticatorData: credential.authenticatorData, signature: credential.attestationSignature, request: request)
        // ...and any change does not.
        var authenticatorData = credential.authenticatorData
        authenticatorData[33] ^= 0x01  // the sign count
        #expect(throws: FIDO2Error.self) {
            try verify(authenticatorData: authenticatorData, signature: credential.attestationSignature, request: request)
        }
        var signature = credential.attestationSignature
        signature[signature.count - 1] ^= 0x01
        #expect(throws: FIDO2Error.self) {
            try verify(authenticatorData: credential.authenticatorData, signature: signature, request: request)
        }
        var otherChallenge = request
        otherChallenge.clientData = .hash(randomHash())
        #expect(throws: FIDO2Error.self) {
            try verify(authenticatorData: credential.authenticatorData, signature: credential.attestationSignature, request: otherChallenge)
        }
        var otherParty = request
        otherParty.relyingParty = RelyingParty(id: "evil.example")
        #expect(throws: FIDO2Error.self) {
            try verify(authenticatorData: credential.authenticatorData, signature: credential.attestationSignature, request: otherParty)
        }
    }

    @Test func selfAttestationVerifiesWithTheCredentialKey() throws {
        let key = try makeKey { $0.attestation = .selfAttestation }
        let credential = try key.openDevice().makeCredential(registrationRequest())
        #expect(credential.format == "packed")
        #expect(credential.attestationCertificate.isEmpty)
        try credential.verifySelf()
        #expect(throws: FIDO2Error.invalidArgument) { try credential.verify() }
    }

    @Test func noneAttestationCarriesNoStatement() throws {
        let key = try makeKey { $0.attestation = .none }
        let credential = try key.openDevice().makeCredential(registrationRequest())
        #expect(credential.format == "none")
        #expect(credential.attestationSignature.isEmpty)
        #expect(credential.credentialID.count > 16)
    }

    @Test func excludeListRefusesASecondRegistration() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        let first = try device.makeCredential(registrationRequest())
        var again = registrationRequest()
        again.excludeList = [randomHash(), first.credentialID]
        #expect(throws: FIDO2Error.credentialExcluded) { try device.makeCredential(again) }
        // The same id for another relying party is not this key's credential there.
        var elsewhere = registrationRequest(rpID: "other.example")
        elsewhere.excludeList = [first.credentialID]
        _ = try device.makeCredential(elsewhere)
    }

    @Test func extensionsAreSignedIntoAuthenticatorData() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        var request = registrationRequest(residentKey: true)
        request.hmacSecret = true
        request.credentialProtection = .userVerificationOptionalWithCredentialIDList
        request.credentialBlob = Array("blob".utf8)
        let credential = try device.makeCredential(request)
        try credential.verify()
        #expect(credential.flags.contains(.extensionData))
        #expect(credential.protection == .userVerificationOptionalWithCredentialIDList)
        let extensions = try decodeExtensions(credential.authenticatorData)
        #expect(extensions["hmac-secret"] == true)
        #expect(extensions["credProtect"] == 2)
        #expect(extensions["credBlob"] == true)

        var tooLong = registrationRequest()
        tooLong.credentialBlob = [UInt8](repeating: 7, count: 33)
        #expect(try decodeExtensions(try device.makeCredential(tooLong).authenticatorData)["credBlob"] == false)
    }

    @Test func discoverableCredentialReplacesOneForTheSameUser() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        _ = try device.makeCredential(registrationRequest(userID: [1], residentKey: true))
        let second = try device.makeCredential(registrationRequest(userID: [1], residentKey: true))
        _ = try device.makeCredential(registrationRequest(userID: [2], residentKey: true))
        let assertion = try device.getAssertion(assertionRequest())
        #expect(assertion.count == 2)
        #expect(assertion.statements.map(\.credentialID).contains(second.credentialID))
    }

    @Test func aFullKeyRefusesMoreDiscoverableCredentials() throws {
        let key = try makeKey { $0.residentCredentialCapacity = 2 }
        let device = try key.openDevice()
        _ = try device.makeCredential(registrationRequest(userID: [1], residentKey: true))
        _ = try device.makeCredential(registrationRequest(userID: [2], residentKey: true))
        #expect(throws: FIDO2Error.keyStoreFull) {
            try device.makeCredential(registrationRequest(userID: [3], residentKey: true))
        }
        _ = try device.makeCredential(registrationRequest(userID: [3], residentKey: false))
    }
}

/// The extensions map at the end of authenticator data.
func decodeExtensions(_ authenticatorData: [UInt8]) throws -> CBORMap {
    try ParsedAuthenticatorData(authenticatorData).extensions
}
