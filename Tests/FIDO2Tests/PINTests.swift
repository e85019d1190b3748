import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// clientPIN through libfido2: set, change, retries and blocking (CTAP 2.1 §6.5).
@Suite struct PINTests {
    @Test func setAndChangeThePIN() throws {
        let key = try makeKey()
        var device = try key.openDevice()
        try device.setPIN("1234")
        #expect(throws: FIDO2Error.pinAuthInvalid, "a PIN that is set cannot be set again") { try device.setPIN("5678") }
        device = try key.openDevice()
        #expect(device.hasPIN)
        try device.changePIN(from: "1234", to: "98765")
        #expect(throws: FIDO2Error.pinInvalid) { try device.makeCredential(registrationRequest(), pin: "1234") }
        let credential = try device.makeCredential(registrationRequest(), pin: "98765")
        #expect(credential.flags.contains(.userVerified))
        #expect(try device.pinRetries() == 8, "a correct PIN restores the retries")
    }

    @Test func aProtectedKeyWantsThePINForDiscoverableCredentials() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        let device = try key.openDevice()
        #expect(throws: FIDO2Error.pinRequired) { try device.makeCredential(registrationRequest(residentKey: true)) }
        // makeCredUvNotRqd: a non-discoverable one needs only a touch.
        let credential = try device.makeCredential(registrationRequest())
        #expect(!credential.flags.contains(.userVerified))
    }

    @Test func shortPINsBreakThePolicy() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        #expect(throws: FIDO2Error.pinPolicyViolation) { try device.setPIN("123") }
        try device.setMinimumPINLength(6, pin: nil)
        #expect(throws: FIDO2Error.pinPolicyViolation) { try device.setPIN("12345") }
        try device.setPIN("123456")
    }

    @Test func wrongPINsCountDownThenBlock() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        var device = try key.openDevice()
        #expect(throws: FIDO2Error.pinInvalid) { try device.changePIN(from: "0000", to: "5555") }
        #expect(try device.pinRetries() == 7)
        #expect(throws: FIDO2Error.pinInvalid) { try device.makeCredential(registrationRequest(), pin: "0000") }
        #expect(try device.pinRetries() == 6)
        // The third wrong PIN in a row blocks PINs until the key is replugged.
        #expect(throws: FIDO2Error.pinAuthBlocked) { try device.makeCredential(registrationRequest(), pin: "0000") }
        #expect(try device.pinRetries() == 5)
        #expect(throws: FIDO2Error.pinAuthBlocked) { try device.makeCredential(registrationRequest(), pin: "1234") }
        #expect(try device.pinRetries() == 5, "refused before a retry is spent")

        func replug() throws -> Device {
            key.unplug()
            key.plugIn()
            return try key.openDevice()
        }
        device = try replug()
        _ = try device.makeCredential(registrationRequest(), pin: "1234")
        #expect(try device.pinRetries() == 8)

        // Eight wrong PINs in all block the PIN for good.
        var spent = 0
        while spent < 8 {
            for _ in 0..<min(2, 8 - spent) {
                #expect(throws: FIDO2Error.self) { try device.makeCredential(registrationRequest(), pin: "0000") }
                spent += 1
            }
            device = try replug()
        }
        #expect(try device.pinRetries() == 0)
        #expect(throws: FIDO2Error.pinBlocked) { try device.makeCredential(registrationRequest(), pin: "1234") }
    }

    @Test func pinsNeverShowInDescriptions() {
        let pin: PIN = "2468"
        #expect(!"\(pin)".contains("2468"))
        #expect(!String(reflecting: pin).contains("2468"))
    }
}
