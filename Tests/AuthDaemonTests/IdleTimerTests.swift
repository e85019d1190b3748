@testable import AuthDaemon
import BrokerTestSupport
import Dispatch
import SystemKit
import TestSupport
import Testing

/// `exit-idle` in process (IdleExit, the service authkeyd runs under
/// socket activation), with short times and no systemd: its wait ends once
/// the broker has been idle for the time on end — no client, no key in
/// use — and a client connecting voids the time counted so far.
/// (EndToEndTests.IdleExitTests start the daemon under a stand-in for
/// systemd's socket.)
@Suite(.timeLimit(.minutes(2))) struct IdleTimerTests {
    static let after = Duration.milliseconds(200)

    /// When the IdleExit service's run returns, measured from its start.
    final class IdleWait: Sendable {
        let returned = Latch()
        let started = ContinuousClock.now
        private let end = Protected<ContinuousClock.Instant?>(nil)

        init(_ broker: InProcessBroker, after: Duration = IdleTimerTests.after) {
            let service = IdleExit(broker: broker.broker, after: after)
            Task { [returned, end] in
                await service.run()
                end.withLock { $0 = .now }
                returned.open()
            }
        }

        /// How long after its start the wait ended, once it has, within `limit`.
        func took(within limit: Duration = .seconds(10)) async -> Duration? {
            let finished = await finishes(within: limit, timerQueue: DispatchQueue(label: "idle-timer-tests"), executor: nil) {
                await self.returned.wait()
            }
            return finished ? end.withLock { $0 }.map { $0 - started } : nil
        }
    }

    @Test func anIdleBrokerIsLeftAfterTheTimeOnEnd() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let took = try #require(await IdleWait(daemon).took(), "the wait did not end")
        #expect(took >= Self.after, "ended after \(took)")
    }

    /// A connected client (a watcher, an agent, a request) keeps the broker
    /// busy however long it stays; once it leaves, the time starts then.
    @Test func aConnectedClientKeepsItAndItsLeavingArmsTheTimer() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let client = try daemon.client()
        _ = try await client.listAuthenticators()
        let wait = IdleWait(daemon)
        #expect(await wait.took(within: Self.after * 3) == nil, "the wait ended with a client connected")

        let left = ContinuousClock.now
        client.close()
        let took = try #require(await wait.took(), "the wait did not end once the client left")
        #expect(wait.started + took - left >= Self.after, "ended \(wait.started + took - left) after the client left")
    }

    /// Activity before the timer fires voids it: a client that comes and
    /// goes halfway through starts the time again.
    @Test func activityDisarmsAnArmedTimer() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let wait = IdleWait(daemon, after: Self.after * 2)
        try await Task.sleep(for: Self.after)
        let client = try daemon.client()
        _ = try await client.listAuthenticators()
        // Read before the close: the broker may see the client go, and arm
        // its timer, before this thread runs again.
        let left = ContinuousClock.now
        client.close()
        let took = try #require(await wait.took(), "the wait did not end")
        #expect(wait.started + took - left >= Self.after * 2, "the timer armed at the start fired: \(took)")
    }

    /// The daemon stopping for another reason (SIGTERM) ends the wait at
    /// once, client or not; a broker already stopping is not waited on.
    @Test func shutdownEndsTheWait() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let client = try daemon.client()
        _ = try await client.listAuthenticators()
        let wait = IdleWait(daemon, after: .seconds(60))
        try await Task.sleep(for: .milliseconds(50))
        await daemon.stop()
        #expect(await wait.took(within: .seconds(5)) != nil, "the wait outlived the shutdown")

        let late = IdleWait(daemon, after: .seconds(60))
        #expect(await late.took(within: .seconds(5)) != nil, "a wait begun after the shutdown did not end")
    }
}
