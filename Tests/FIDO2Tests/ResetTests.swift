import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// authenticatorReset: only just after power-up, only with a touch.
@Suite struct ResetTests {
    @Test func resetWithinTheWindowErasesEverything() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        var device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest(residentKey: true), pin: "1234")
        try device.reset()
        device = try key.openDevice()
        #expect(!device.hasPIN)
        #expect(throws: FIDO2Error.noCredentials) { try device.getAssertion(assertionRequest()) }
        #expect(throws: FIDO2Error.noCredentials) { try device.getAssertion(assertionRequest(allow: [credential.credentialID])) }
        #expect(try device.info().remainingDiscoverableCredentials == 25)
    }

    /// After a reset there is no PIN, and so no attempts to count: the key
    /// answers getPINRetries with PIN_NOT_SET, as python-fido2's device
    /// suite (test_clientpin::test_set_and_reset) expects of a YubiKey; a
    /// new PIN brings the full count back.
    @Test func afterAResetThePINRetriesAreNotSet() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        var device = try key.openDevice()
        #expect(throws: FIDO2Error.pinInvalid) { try device.makeCredential(registrationRequest(), pin: "9999") }
        #expect(try device.pinRetries() == 7)
        try device.reset()
        device = try key.openDevice()
        #expect(try device.info().options["clientPin"] == false)
        #expect(throws: FIDO2Error.pinNotSet) { try device.pinRetries() }
        try device.setPIN("5678")
        #expect(try device.pinRetries() == 8, "the attempts spent before the reset are gone")
    }

    @Test func resetOutsideTheWindowIsNotAllowedUntilReplugged() throws {
        let key = try makeKey { $0.resetWindow = .milliseconds(100) }
        var device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        blockingSleep(.milliseconds(250))
        #expect(throws: FIDO2Error.notAllowed) { try device.reset() }
        _ = try device.getAssertion(assertionRequest(allow: [credential.credentialID]))
        key.unplug()
        key.plugIn()
        device = try key.openDevice()
        try device.reset()
    }

    @Test func resetNeedsATouch() throws {
        let key = try makeKey { $0.presence = .denied }
        #expect(throws: FIDO2Error.operationDenied) { try key.openDevice().reset() }
    }
}

