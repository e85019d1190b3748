@testable import AuthDaemon
import BrokerTestSupport
import FIDO2
import Testing

/// A key's worker answers every call, before and after it stops: a call
/// left unanswered leaves its request waiting for good.
@Suite(.timeLimit(.minutes(1))) struct DeviceWorkerTests {
    @Test func callsAfterTheWorkerStoppedFailAtOnceAsAClosedKeysDo() async {
        let worker = DeviceWorker(name: "test", linger: .zero) { () throws(FIDO2Error) -> Device in
            throw FIDO2Error.notFound
        }
        worker.stop()
        for _ in 0..<3 {
            await #expect(throws: DeviceWorker.stoppedError) {
                try await worker.call(until: inTenSeconds()) { _ throws(FIDO2Error) in 1 }
            }
        }
    }

    /// Found by LeakSanitizer: a broker shut down twice (a test's broker
    /// stopped, then released) queued its keys' close jobs behind the
    /// first shutdown's stop, and they were never run.
    @Test func aSecondShutdownReturnsAndLeavesNoCallWaiting() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Twice Stopped Key"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        await daemon.broker.shutDown()
        await daemon.broker.shutDown()
        await #expect(throws: DeviceWorker.stoppedError) { try await key.worker.call(until: inTenSeconds()) { _ throws(FIDO2Error) in 1 } }
    }
}
