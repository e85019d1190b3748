import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// getAssertion (and getNextAssertion, which libfido2 sends by itself)
/// through libfido2, verified with `fido_assert_verify`.
@Suite struct AssertionTests {
    @Test func assertionVerifiesAndTamperingIsCaught() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        let request = assertionRequest(allow: [credential.credentialID])
        let assertion = try device.getAssertion(request)
        #expect(assertion.count == 1)
        try assertion.verify(es256PublicKey: credential.publicKey)
        let statement = assertion.statement(at: 0)
        #expect(statement.credentialID == credential.credentialID)
        #expect(statement.flags.contains(.userPresent))
        #expect(statement.signCount > credential.signCount, "the counter only grows")

        // Reassembled from its parts it verifies; altered, it does not.
        try Assertion.forVerification(
            request: request, authenticatorData: statement.authenticatorData, signature: statement.signature
        ).verify(es256PublicKey: credential.publicKey)
        var authenticatorData = statement.authenticatorData
        authenticatorData[32] ^= 0x04  // claim user verification
        #expect(throws: FIDO2Error.self) {
            try Assertion.forVerification(request: request, authenticatorData: authenticatorData, signature: statement.signature)
                .verify(es256PublicKey: credential.publicKey)
        }
        var otherChallenge = request
        otherChallenge.clientData = .hash(randomHash())
        #expect(throws: FIDO2Error.self) {
            try Assertion.forVerification(
                request: otherChallenge, authenticatorData: statement.authenticatorData, signature: statement.signature
            ).verify(es256PublicKey: credential.publicKey)
        }
        let stranger = try device.makeCredential(registrationRequest())
        #expect(throws: FIDO2Error.invalidSig) { try assertion.verify(es256PublicKey: stranger.publicKey) }
    }

    @Test func credentialsOfOtherPartiesAndKeysAreNotFound() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        #expect(throws: FIDO2Error.noCredentials) {
            try device.getAssertion(assertionRequest(rpID: "other.example", allow: [credential.credentialID]))
        }
        let otherKey = try makeKey().openDevice()
        #expect(throws: FIDO2Error.noCredentials) {
            try otherKey.getAssertion(assertionRequest(allow: [credential.credentialID]))
        }
        #expect(throws: FIDO2Error.noCredentials) { try device.getAssertion(assertionRequest()) }
    }

    @Test func severalDiscoverableCredentialsComeNewestFirst() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        let made = try (1...3).map { index in
            try device.makeCredential(registrationRequest(userID: [UInt8(index)], userName: "user\(index)", residentKey: true))
        }
        let assertion = try device.getAssertion(assertionRequest())
        #expect(assertion.count == 3)
        #expect(assertion.statements.map(\.credentialID) == made.reversed().map(\.credentialID))
        #expect(assertion.statements.map(\.userID) == [[3], [2], [1]])
        for (statement, credential) in zip(assertion.statements, made.reversed()) {
            #expect(statement.userName == nil, "names only after user verification")
            #expect(statement.credentialID == credential.credentialID)
        }
        for index in 0..<3 { try assertion.verify(at: index, es256PublicKey: made[2 - index].publicKey) }
    }

    @Test func silentProbeSignsWithoutPresence() throws {
        let key = try makeKey { $0.presence = .never }
        let device = try key.openDevice()
        key.presence = .immediate
        let credential = try device.makeCredential(registrationRequest())
        key.presence = .never
        var request = assertionRequest(allow: [credential.credentialID])
        request.userPresence = .disabled
        let statement = try device.getAssertion(request).statement(at: 0)
        #expect(!statement.flags.contains(.userPresent))
    }

    @Test func deniedPresenceIsRefused() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        key.presence = .denied
        #expect(throws: FIDO2Error.operationDenied) {
            try device.getAssertion(assertionRequest(allow: [credential.credentialID]))
        }
    }

    @Test func credBlobComesBackWithTheAssertion() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        var registration = registrationRequest(residentKey: true)
        registration.credentialBlob = Array("remember me".utf8)
        _ = try device.makeCredential(registration)
        var request = assertionRequest()
        request.credentialBlob = true
        #expect(try device.getAssertion(request).statement(at: 0).credentialBlob == Array("remember me".utf8))
    }

    @Test func hmacSecretIsStablePerSaltAndCredential() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        var registration = registrationRequest()
        registration.hmacSecret = true
        let credential = try device.makeCredential(registration)
        func secret(_ salt: [UInt8]) throws -> [UInt8] {
            var request = assertionRequest(allow: [credential.credentialID])
            request.hmacSalt = salt
            return try device.getAssertion(request).statement(at: 0).hmacSecret
        }
        let salt = randomHash()
        let first = try secret(salt)
        #expect(first.count == 32)
        #expect(try secret(salt) == first)
        #expect(try secret(randomHash()) != first)
        let two = try secret(salt + randomHash())
        #expect(two.count == 64)
        #expect(Array(two.prefix(32)) == first)
    }

    @Test func credProtectHidesCredentialsFromUnverifiedRequests() throws {
        let key = try makeKey { $0.initialPIN = "4321" }
        let device = try key.openDevice()
        var required = registrationRequest(userID: [3], residentKey: true)
        required.credentialProtection = .userVerificationRequired
        let level3 = try device.makeCredential(required, pin: "4321")
        var optionalWithList = registrationRequest(userID: [2], residentKey: true)
        optionalWithList.credentialProtection = .userVerificationOptionalWithCredentialIDList
        let level2 = try device.makeCredential(optionalWithList, pin: "4321")

        // Without verification: level 3 never shows, level 2 only by id.
        #expect(throws: FIDO2Error.noCredentials) { try device.getAssertion(assertionRequest()) }
        #expect(throws: FIDO2Error.noCredentials) { try device.getAssertion(assertionRequest(allow: [level3.credentialID])) }
        #expect(try device.getAssertion(assertionRequest(allow: [level2.credentialID])).count == 1)
        // With the PIN both show, with their names.
        let verified = try device.getAssertion(assertionRequest(), pin: "4321")
        #expect(verified.count == 2)
        #expect(verified.statements.allSatisfy { $0.flags.contains(.userVerified) && $0.userName != nil })
    }
}
