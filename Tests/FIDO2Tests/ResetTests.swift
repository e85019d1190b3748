import FIDO2
import TestSupport
import Testing
import VirtualKey

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

