import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// hmac-secret at getAssertion (CTAP 2.1 §12.5) through libfido2, with each
/// PIN/UV auth protocol. libfido2 1.12 has no call to choose the protocol:
/// it takes 2 whenever the key offers it, so each case makes a key that
/// offers only one protocol (and refuses the other).
@Suite struct HMACSecretTests {
    let directory = TemporaryDirectory()

    /// A key on a state file that offers only `protocols`.
    func key(offering protocols: [Int], state: String, pin: String? = nil) throws -> Device {
        try makeKey {
            $0.pinUVAuthProtocols = protocols
            $0.stateFile = state
            $0.initialPIN = pin
        }.openDevice()
    }

    func secret(_ device: Device, _ credential: [UInt8], salt: [UInt8], pin: PIN? = nil) throws -> AssertionStatement {
        var request = assertionRequest(allow: [credential])
        request.hmacSalt = salt
        return try device.getAssertion(request, pin: pin).statement(at: 0)
    }

    @Test(arguments: [[1], [2]]) func oneAndTwoSaltsWithEachProtocol(protocols: [Int]) throws {
        let device = try key(offering: protocols, state: directory.file("key.state"))
        #expect(try device.info().pinProtocols == protocols.map(UInt8.init))
        var registration = registrationRequest()
        registration.hmacSecret = true
        let credential = try device.makeCredential(registration)

        let salt1 = randomHash(), salt2 = randomHash()
        let one = try secret(device, credential.credentialID, salt: salt1).hmacSecret
        #expect(one.count == 32)
        #expect(try secret(device, credential.credentialID, salt: salt1).hmacSecret == one, "same salt, same output")
        #expect(try secret(device, credential.credentialID, salt: salt2).hmacSecret != one)
        let two = try secret(device, credential.credentialID, salt: salt1 + salt2).hmacSecret
        #expect(two.count == 64)
        #expect(Array(two.prefix(32)) == one, "output1 is salt1's output")
        #expect(Array(two.suffix(32)) == (try secret(device, credential.credentialID, salt: salt2).hmacSecret))
    }

    @Test(arguments: [[1], [2]]) func userVerificationSelectsTheOtherSecret(protocols: [Int]) throws {
        let device = try key(offering: protocols, state: directory.file("key.state"), pin: "1234")
        var registration = registrationRequest()
        registration.hmacSecret = true
        let credential = try device.makeCredential(registration, pin: "1234")
        let salt = randomHash()

        let presence = try secret(device, credential.credentialID, salt: salt)
        let verified = try secret(device, credential.credentialID, salt: salt, pin: "1234")
        #expect(!presence.flags.contains(.userVerified) && verified.flags.contains(.userVerified))
        #expect(presence.hmacSecret.count == 32 && verified.hmacSecret.count == 32)
        #expect(presence.hmacSecret != verified.hmacSecret, "CredRandomWithUV and WithoutUV differ")
        #expect(try secret(device, credential.credentialID, salt: salt, pin: "1234").hmacSecret == verified.hmacSecret)
    }

    /// The outputs are the key's HMAC, not an artefact of one protocol's
    /// encryption: the same key (state file) answers the same bytes to a
    /// host on protocol 1 and to a host on protocol 2.
    @Test func bothProtocolsDecryptToTheSameOutputs() throws {
        let state = directory.file("shared.state")
        var registration = registrationRequest()
        registration.hmacSecret = true
        let credential = try key(offering: [2, 1], state: state).makeCredential(registration)
        let salts = randomHash() + randomHash()
        let viaOne = try secret(try key(offering: [1], state: state), credential.credentialID, salt: salts)
        let viaTwo = try secret(try key(offering: [2], state: state), credential.credentialID, salt: salts)
        #expect(viaOne.hmacSecret.count == 64)
        #expect(viaOne.hmacSecret == viaTwo.hmacSecret)
        // With verification too, through each protocol's token.
        let pinned = directory.file("pinned.state")
        let withPIN = try key(offering: [2, 1], state: pinned, pin: "1234").makeCredential(registration, pin: "1234")
        let tokenOne = try secret(try key(offering: [1], state: pinned), withPIN.credentialID, salt: salts, pin: "1234")
        let tokenTwo = try secret(try key(offering: [2], state: pinned), withPIN.credentialID, salt: salts, pin: "1234")
        #expect(tokenOne.flags.contains(.userVerified) && tokenTwo.flags.contains(.userVerified))
        #expect(tokenOne.hmacSecret == tokenTwo.hmacSecret)
    }

    @Test func aCredentialWithoutHMACSecretAnswersNoOutput() throws {
        let device = try key(offering: [2, 1], state: directory.file("key.state"))
        let credential = try device.makeCredential(registrationRequest())
        let statement = try secret(device, credential.credentialID, salt: randomHash())
        #expect(statement.hmacSecret.isEmpty)
        try device.getAssertion(assertionRequest(allow: [credential.credentialID])).verify(es256PublicKey: credential.publicKey)
    }

    /// libfido2 takes 32 or 64 bytes only; the key's own refusal of a
    /// decrypted salt of another length is in VirtualKeyTests.
    @Test(arguments: [0, 16, 31, 33, 48, 65, 96]) func libfido2RefusesOtherSaltLengths(length: Int) throws {
        let device = try key(offering: [2, 1], state: directory.file("key.state"))
        var registration = registrationRequest()
        registration.hmacSecret = true
        let credential = try device.makeCredential(registration)
        #expect(throws: FIDO2Error.invalidArgument) {
            try secret(device, credential.credentialID, salt: [UInt8](repeating: 7, count: length))
        }
    }
}
