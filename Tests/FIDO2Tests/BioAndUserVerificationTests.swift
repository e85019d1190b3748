import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// Bio enrollment and built-in user verification with the simulated sensor.
@Suite struct BioAndUserVerificationTests {
    /// Enrolls one finger through libfido2, sample by sample.
    static func enrollFinger(on device: Device, pin: PIN) throws -> [UInt8] {
        let (enrollment, first) = try device.beginBioEnrollment(pin: pin, sampleTimeout: .seconds(5))
        var progress = [first]
        while progress.last!.remainingSamples > 0 {
            progress.append(try enrollment.captureNextSample(timeout: .seconds(5)))
        }
        #expect(progress.map(\.remainingSamples) == [3, 2, 1, 0])
        #expect(progress.allSatisfy { $0.lastSampleStatus == 0 })
        return enrollment.templateID
    }

    @Test func enrollListRenameRemove() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        var device = try key.openDevice()
        let sensor = try device.bioSensorInfo()
        #expect(sensor.type == 1)
        #expect(sensor.maxSamples == 4)
        #expect(try device.bioTemplates(pin: "1234").isEmpty)

        let id = try Self.enrollFinger(on: device, pin: "1234")
        device = try key.openDevice()
        #expect(device.hasUV, "getInfo now reports uv: true")
        #expect(
            try device.bioTemplates(pin: "1234") == [BioTemplate(id: id, name: "")],
            "an unnamed finger has an empty templateFriendlyName, as YubiKey Bio sends it (python-fido2 reads the member)")
        try device.renameBioTemplate(id: id, name: "left thumb", pin: "1234")
        #expect(try device.bioTemplates(pin: "1234").first?.name == "left thumb")
        #expect(throws: FIDO2Error.invalidOption) { try device.renameBioTemplate(id: [9, 9], name: "x", pin: "1234") }
        try device.removeBioTemplate(id: id, pin: "1234")
        #expect(try device.bioTemplates(pin: "1234").isEmpty)
        #expect(throws: FIDO2Error.pinInvalid) { try device.bioTemplates(pin: "0000") }
    }

    /// libfido2 learns how to verify the user only at open: a handle opened
    /// before the enrollment keeps asking for a PIN until reopened, and a
    /// reopened custom connection is the same connection, still working.
    @Test func aHandleOpenedBeforeEnrollmentUsesTheSensorOnlyOnceReopened() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        let device = try key.openDevice()
        _ = try Self.enrollFinger(on: device, pin: "1234")
        var request = registrationRequest()
        request.userVerification = .enabled
        #expect(!device.hasUV, "the flags read at open")
        #expect(throws: FIDO2Error.self) { try device.makeCredential(request) }

        try device.reopen()
        #expect(device.hasUV)
        #expect(try device.makeCredential(request).flags.contains(.userVerified))
        try device.reopen()
        #expect(try device.bioTemplates(pin: "1234").count == 1)
    }

    @Test func cancelledEnrollmentLeavesNoTemplate() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        let device = try key.openDevice()
        let (enrollment, progress) = try device.beginBioEnrollment(pin: "1234", sampleTimeout: .seconds(5))
        #expect(progress.remainingSamples == 3)
        try enrollment.cancel()
        #expect(try device.bioTemplates(pin: "1234").isEmpty)
    }

    @Test func fingerprintVerifiesTheUserWithoutAPIN() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        _ = try Self.enrollFinger(on: key.openDevice(), pin: "1234")
        let device = try key.openDevice()
        var request = registrationRequest(residentKey: true)
        request.userVerification = .enabled
        // No PIN given: libfido2 asks the sensor for a token (clientPIN 0x06).
        let credential = try device.makeCredential(request)
        #expect(credential.flags.contains(.userVerified))
        var assertion = assertionRequest()
        assertion.userVerification = .enabled
        let statement = try device.getAssertion(assertion).statement(at: 0)
        #expect(statement.flags.contains(.userVerified))
        #expect(statement.userName == "alice")
    }

    @Test func aFingerThatDoesNotMatchCostsARetryAndThePINStillWorks() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        _ = try Self.enrollFinger(on: key.openDevice(), pin: "1234")
        let device = try key.openDevice()
        #expect(try device.uvRetries() == 8)
        key.userVerification = .noMatch
        var request = registrationRequest()
        request.userVerification = .enabled
        #expect(throws: FIDO2Error.uvInvalid) { try device.makeCredential(request) }
        #expect(try device.uvRetries() == 7)
        // Falling back to the PIN, as a platform does after a failed UV.
        let credential = try device.makeCredential(registrationRequest(), pin: "1234")
        #expect(credential.flags.contains(.userVerified))
        #expect(try device.uvRetries() == 8, "a correct PIN unblocks the sensor")
    }

    @Test func sensorBlocksAfterItsRetries() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        _ = try Self.enrollFinger(on: key.openDevice(), pin: "1234")
        let device = try key.openDevice()
        key.userVerification = .noMatch
        var request = registrationRequest()
        request.userVerification = .enabled
        for _ in 0..<7 { #expect(throws: FIDO2Error.uvInvalid) { try device.makeCredential(request) } }
        #expect(throws: FIDO2Error.uvBlocked) { try device.makeCredential(request) }
        key.userVerification = .match
        #expect(throws: FIDO2Error.uvBlocked) { try device.makeCredential(request) }
    }
}
