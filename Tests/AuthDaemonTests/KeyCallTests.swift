@testable import AuthDaemon
import FIDO2
import SystemKit
import TestSupport
import Testing

/// Cancelling one libfido2 call on a key, however the cancel and the call
/// cross: before the call's turn, while it waits for a touch, after it.
@Suite(.timeLimit(.minutes(1))) struct KeyCallTests {
    @Test func aCallCancelledBeforeItsTurnNeverReachesTheKey() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Idle Key"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        let call = KeyCall(on: key.worker)
        call.cancel()
        let reached = Protected(false)
        await #expect(throws: FIDO2Error.keepaliveCancel) {
            try await call.run { _ throws(FIDO2Error) in reached.withLock { $0 = true } }
        }
        #expect(!reached.withLock { $0 }, "the body never ran")
        // Another call on the key is not touched by that cancel.
        _ = try await KeyCall(on: key.worker).run { device throws(FIDO2Error) in try device.makeCredential(registrationRequest()) }
    }

    @Test func aCallWaitingForATouchEndsSoonAfterTheCancelAndTheNextOneIsServed() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Untouched Key,presence=never"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        let call = KeyCall(on: key.worker)
        let started = ContinuousClock.now
        Task {
            try? await Task.sleep(for: .milliseconds(200))
            call.cancel()
        }
        await #expect(throws: FIDO2Error.keepaliveCancel) {
            try await call.run { device throws(FIDO2Error) in try device.makeCredential(registrationRequest()) }
        }
        #expect(ContinuousClock.now - started < .seconds(3))
        // Cancelling again after the end reaches nothing: the next call
        // runs to its own end (here the key's timeout, not a cancel).
        call.cancel()
        let next = KeyCall(on: key.worker)
        do {
            _ = try await next.run { device throws(FIDO2Error) in
                device.timeout = .milliseconds(300)
                defer { device.timeout = Device.defaultTimeout }
                return try device.makeCredential(registrationRequest())
            }
            Issue.record("a key that is never touched made a credential")
        } catch {
            #expect(error != .keepaliveCancel, "the earlier cancel reached the next call")
        }
    }
}
