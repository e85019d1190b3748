@testable import AuthDaemon
import BrokerTestSupport
import Dispatch
import FIDO2
import SystemKit
import TestSupport
import Testing

/// Cancelling one libfido2 call on a key, however the cancel and the call
/// cross: before the call's turn, while it waits for a touch, after it.
@Suite(.timeLimit(.minutes(1))) struct KeyCallCancellationTests {
    @Test func aCallCancelledBeforeItsTurnNeverReachesTheKey() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Idle Key"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        let cancellation = KeyCallCancellation()
        cancellation.cancel()
        let reached = Protected(false)
        await #expect(throws: FIDO2Error.keepaliveCancel) {
            try await key.worker.call(until: inTenSeconds(), cancellation: cancellation) { _ throws(FIDO2Error) in
                reached.withLock { $0 = true }
            }
        }
        #expect(!reached.withLock { $0 }, "the body never ran")
        // Another call on the key is not touched by that cancel.
        _ = try await key.worker.call(until: inTenSeconds()) { device throws(FIDO2Error) in
            try device.makeCredential(registrationRequest())
        }
    }

    @Test func aCallWaitingForATouchEndsSoonAfterTheCancelAndTheNextOneIsServed() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Untouched Key,presence=never"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        let cancellation = KeyCallCancellation()
        let started = ContinuousClock.now
        Task {
            try? await Task.sleep(for: .milliseconds(200))
            cancellation.cancel()
        }
        await #expect(throws: FIDO2Error.keepaliveCancel) {
            try await key.worker.call(until: inTenSeconds(), cancellation: cancellation) { device throws(FIDO2Error) in
                try device.makeCredential(registrationRequest())
            }
        }
        #expect(ContinuousClock.now - started < .seconds(3))
        // Cancelling again after the end reaches nothing: the next call
        // runs to its own end (here its deadline, not a cancel).
        cancellation.cancel()
        do {
            _ = try await key.worker.call(until: .now() + .milliseconds(300)) { device throws(FIDO2Error) in
                try device.makeCredential(registrationRequest())
            }
            Issue.record("a key that is never touched made a credential")
        } catch {
            #expect(error != .keepaliveCancel, "the earlier cancel reached the next call")
        }
    }
}

/// A deadline far enough off for a test's call.
func inTenSeconds() -> DispatchTime { .now() + .seconds(10) }
