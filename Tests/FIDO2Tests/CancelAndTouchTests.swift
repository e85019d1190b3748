import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// Waiting for the user: keepalives, cancel from another thread, and
/// touch-to-select (`fido_dev_get_touch_begin`/`status`).
@Suite struct CancelAndTouchTests {
    @Test func cancelWhileWaitingForATouchEndsWithKeepaliveCancel() throws {
        let key = try makeKey { $0.presence = .never }
        let device = try key.openDevice()
        runLater(after: .milliseconds(300)) { try? device.cancel() }
        let clock = ContinuousClock()
        let started = clock.now
        #expect(throws: FIDO2Error.keepaliveCancel) { try device.makeCredential(registrationRequest()) }
        #expect(clock.now - started < .seconds(5))
        // The key serves the next request.
        key.presence = .immediate
        _ = try device.makeCredential(registrationRequest())
    }

    @Test func aTouchAfterADelayCompletesTheRequest() throws {
        let key = try makeKey { $0.presence = .after(.milliseconds(350)) }
        let clock = ContinuousClock()
        let started = clock.now
        _ = try key.openDevice().makeCredential(registrationRequest())
        #expect(clock.now - started >= .milliseconds(300))
    }

    @Test func manualTouch() throws {
        let key = try makeKey { $0.presence = .manual }
        runLater(after: .milliseconds(200)) { key.touch() }
        _ = try key.openDevice().makeCredential(registrationRequest())
    }

    @Test func keyTimesOutWhenNobodyTouches() throws {
        let key = try makeKey { $0.presence = .never; $0.presenceTimeout = .milliseconds(300) }
        #expect(throws: FIDO2Error.userActionTimeout) { try key.openDevice().makeCredential(registrationRequest()) }
    }

    @Test func touchToSelectReportsTheTouchedKey() throws {
        let slow = try makeKey { $0.presence = .after(.milliseconds(200)) }
        let never = try makeKey { $0.presence = .never }
        let withPIN = try makeKey { $0.presence = .after(.milliseconds(200)); $0.initialPIN = "1234" }
        for key in [slow, withPIN] {
            let device = try key.openDevice()
            try device.touchBegin()
            #expect(try device.touchStatus(timeout: .milliseconds(50)) == false)
            var touched = false
            for _ in 0..<20 where !touched { touched = try device.touchStatus(timeout: .milliseconds(100)) }
            #expect(touched)
        }
        let untouched = try never.openDevice()
        try untouched.touchBegin()
        #expect(try untouched.touchStatus(timeout: .milliseconds(300)) == false)
        try untouched.cancel()
    }
}
