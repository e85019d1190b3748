import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// authenticatorConfig through libfido2: always-UV and the minimum PIN length.
@Suite struct ConfigTests {
    @Test func alwaysUVDemandsVerificationForEveryAssertion() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        var device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        try device.toggleAlwaysUV(pin: "1234")
        device = try key.openDevice()
        #expect(try device.info().options["alwaysUv"] == true)
        var request = assertionRequest(allow: [credential.credentialID])
        request.userVerification = .disabled
        #expect(throws: FIDO2Error.pinRequired) { try device.getAssertion(request) }
        let statement = try device.getAssertion(assertionRequest(allow: [credential.credentialID]), pin: "1234").statement(at: 0)
        #expect(statement.flags.contains(.userVerified))
        try device.toggleAlwaysUV(pin: "1234")
        _ = try device.getAssertion(request)
    }

    @Test func minimumPINLengthOnlyGrowsAndForcesAChange() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        var device = try key.openDevice()
        try device.setMinimumPINLength(6, pin: "1234")
        device = try key.openDevice()
        let info = try device.info()
        #expect(info.minPINLength == 6)
        #expect(info.forcePINChange, "the current PIN is now too short")
        #expect(throws: FIDO2Error.pinPolicyViolation) { try device.makeCredential(registrationRequest(residentKey: true), pin: "1234") }
        try device.changePIN(from: "1234", to: "123456")
        _ = try device.makeCredential(registrationRequest(residentKey: true), pin: "123456")
        #expect(throws: FIDO2Error.pinPolicyViolation) { try device.setMinimumPINLength(4, pin: "123456") }
    }

    @Test func minPinLengthExtensionOnlyForNamedRelyingParties() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        let device = try key.openDevice()
        try device.setMinimumPINLengthRelyingParties(["example.org"], pin: "1234")
        var request = registrationRequest()
        request.minPINLength = true
        #expect(try device.makeCredential(request, pin: "1234").minPINLength == 4)
        var other = registrationRequest(rpID: "other.example")
        other.minPINLength = true
        #expect(try device.makeCredential(other, pin: "1234").minPINLength == nil)
    }
}
