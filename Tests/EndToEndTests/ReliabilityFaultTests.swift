import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// A key that misbehaves (set with the virtual key's `fault=` setting, in
/// the daemon or in an `authkeyd-virtkey` process): its request fails with
/// `deviceError` or `timeout` within the request timeout plus half a
/// second, a second key serves another client meanwhile, and the key
/// serves normally once the fault has passed or the key has come back.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ReliabilityFaultTests {
    static let requestTimeout: Duration = .seconds(1)
    /// How long a failing request may take: the request timeout plus 0.5 s.
    static let bound = requestTimeout + .milliseconds(500)
    /// The healthy key waits this long for its touch, so that its operation
    /// runs while the faulty key's does.
    static let healthyTouch = "after:300ms"
    /// Replies a key sends before the fault: libfido2's getInfo when the
    /// daemon opens it, and the daemon's own getInfo, PIN retries and
    /// fingerprint retries (what `authenticators.info` shows until the
    /// next change).
    static let bringUpReplies = 4

    /// What one faulty request and one healthy request, started together, came to.
    struct Outcome {
        var faultyReason: ErrorReason?
        var faultyElapsed: Duration
        var healthyElapsed: Duration
    }

    /// Starts a request on the faulty key and a registration on the healthy
    /// one at the same time.
    func faultyAndHealthy(
        _ daemon: DaemonProcess, healthy: String, _ faulty: @escaping @Sendable (AuthClient) async throws -> CredentialResult
    ) async throws -> Outcome {
        let clock = ContinuousClock()
        let faultyClient = try daemon.client(), healthyClient = try daemon.client()
        faultyClient.setUI(ScriptedUI())
        healthyClient.setUI(ScriptedUI())
        let started = clock.now
        async let faultyResult: (ErrorReason?, Duration) = {
            do {
                _ = try await faulty(faultyClient)
                Issue.record("the faulty key's request succeeded")
                return (nil, clock.now - started)
            } catch let error as AuthClientError {
                return (error.reason, clock.now - started)
            }
        }()
        async let healthyResult: Duration = {
            let result = try await healthyClient.createCredential(WebAuthnFixtures.createParams(authenticator: healthy))
            #expect(WebAuthnFixtures.isMade(for: "example.org", result.credential))
            return clock.now - started
        }()
        let (faultyOutcome, healthyElapsed) = try await (faultyResult, healthyResult)
        return Outcome(faultyReason: faultyOutcome.0, faultyElapsed: faultyOutcome.1, healthyElapsed: healthyElapsed)
    }

    func expectFailedInTime(_ outcome: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.faultyReason == .deviceError || outcome.faultyReason == .timeout,
                "reason \(String(describing: outcome.faultyReason))", sourceLocation: sourceLocation)
        #expect(outcome.faultyElapsed <= Self.bound, "the faulty request took \(outcome.faultyElapsed)", sourceLocation: sourceLocation)
        // The healthy key did not wait for the faulty one: when the faulty
        // request ran to its timeout, the healthy registration (one touch
        // of 300 ms) was done before it. A fault that fails at once proves
        // nothing here; the healthy registration's success is its check.
        if outcome.faultyReason == .timeout {
            #expect(outcome.healthyElapsed < outcome.faultyElapsed,
                    "the healthy key took \(outcome.healthyElapsed), the faulty one failed after \(outcome.faultyElapsed)",
                    sourceLocation: sourceLocation)
        }
    }

    /// Registrations on the key, each checked to be the reply to its own
    /// request (a late reply to the failed one must not stand in for it).
    func expectServes(_ daemon: DaemonProcess, key: String, times: Int = 2) async throws -> Duration {
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let clock = ContinuousClock()
        let started = clock.now
        for round in 0..<times {
            let rpID = "round\(round).example"
            let result = try await client.createCredential(WebAuthnFixtures.createParams(rpID: rpID, authenticator: key))
            #expect(WebAuthnFixtures.isMade(for: rpID, result.credential), "key \(key), round \(round): a reply to another request")
        }
        return clock.now - started
    }

    @Test(arguments: ["stall", "garbage", "wrong-channel", "drop", "delay:2500ms"])
    func aFaultyKeyFailsItsRequestInTimeWhileAnotherKeyServes(fault: String) async throws {
        let daemon = try DaemonProcess([
            "--request-timeout", "1s", "--virtual-key", "name=Healthy,presence=\(Self.healthyTouch)",
            "--virtual-key", "name=Faulty,fault=\(fault),fault-after=\(Self.bringUpReplies)",
        ])
        _ = try await daemon.waitForKeys(2)
        let outcome = try await faultyAndHealthy(daemon, healthy: "v1") { client in
            try await client.createCredential(WebAuthnFixtures.createParams(rpID: "faulty.example", authenticator: "v2"))
        }
        expectFailedInTime(outcome)
        // A late reply (delay) arrives after the request has given up: let it
        // come, then the key must answer each later request with its own reply.
        if fault.hasPrefix("delay:") { try await Task.sleep(for: .milliseconds(2500) - outcome.faultyElapsed + .milliseconds(200)) }
        let recovery = try await expectServes(daemon, key: "v2")
        ReliabilityFigures.record(test: "fault.\(fault.split(separator: ":")[0])", figures: [
            "reason": .string(outcome.faultyReason?.rawValue ?? "none"),
            "failedAfterMs": ReliabilityFigures.milliseconds(outcome.faultyElapsed),
            "boundMs": ReliabilityFigures.milliseconds(Self.bound),
            "healthyKeyMs": ReliabilityFigures.milliseconds(outcome.healthyElapsed),
            "twoRegistrationsAfterMs": ReliabilityFigures.milliseconds(recovery),
        ])
    }

    @Test func anInProcessKeyThatVanishesIsRemovedAndTheOtherServes() async throws {
        let daemon = try DaemonProcess([
            "--request-timeout", "1s", "--virtual-key", "name=Healthy,presence=\(Self.healthyTouch)",
            "--virtual-key", "name=Faulty,fault=vanish,fault-after=\(Self.bringUpReplies)",
        ])
        _ = try await daemon.waitForKeys(2)
        let outcome = try await faultyAndHealthy(daemon, healthy: "v1") { client in
            try await client.createCredential(WebAuthnFixtures.createParams(authenticator: "v2"))
        }
        expectFailedInTime(outcome)
        let client = try daemon.client()
        #expect(try await eventually { try await client.listAuthenticators().map(\.id) == ["v1"] }, "the vanished key is still listed")
        _ = try await expectServes(daemon, key: "v1", times: 1)
        ReliabilityFigures.record(test: "fault.vanishInProcess", figures: [
            "reason": .string(outcome.faultyReason?.rawValue ?? "none"),
            "failedAfterMs": ReliabilityFigures.milliseconds(outcome.faultyElapsed),
            "healthyKeyMs": ReliabilityFigures.milliseconds(outcome.healthyElapsed),
        ])
    }

    /// The key process vanishes mid-assertion (`--fault vanish`), is
    /// killed and started again: the daemon takes the key back and an
    /// assertion with the credential made before works.
    @Test func anAttachedKeyThatVanishesMidAssertionComesBackAndAsserts() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let keySocket = directory.file("key.sock"), state = directory.file("key.state")
        let credentialID = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "state=\(state)")).openDevice()
            .makeCredential(registrationRequest()).credentialID
        var server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), [
            "--socket", keySocket, "--state", state, "--fault", "vanish", "--fault-after", "\(Self.bringUpReplies)",
        ])
        #expect(waitUntil { access(keySocket, F_OK) == 0 })
        let daemon = try DaemonProcess(
            ["--request-timeout", "1s", "--virtual-key", "name=Healthy,presence=\(Self.healthyTouch)", "--attach", "unix:\(keySocket)"],
            directory: directory)
        _ = try await daemon.waitForKeys(2)
        let watcher = try daemon.client()
        _ = try await watcher.watchAuthenticators()
        var events = watcher.authenticatorEvents.makeAsyncIterator()
        let assertion = WebAuthnFixtures.getParams(allow: [Base64URL.encode(credentialID)], authenticator: "s1")

        let outcome = try await faultyAndHealthy(daemon, healthy: "v1") { client in try await client.getCredential(assertion) }
        expectFailedInTime(outcome)
        let removed = await events.next()
        guard case .removed(let gone)? = removed else {
            Issue.record("expected the key to be removed, got \(String(describing: removed))")
            return
        }
        #expect(gone.id == "s1")

        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()
        let clock = ContinuousClock()
        let restarted = clock.now
        server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", keySocket, "--state", state])
        defer { server.stop() }
        let added = await events.next()
        let recovered = clock.now - restarted
        guard case .added(let key)? = added else {
            Issue.record("expected the key back, got \(String(describing: added))")
            return
        }
        #expect(key.transport == .socket)
        var again = assertion
        again.authenticator = key.id
        let client = try daemon.client()
        let result = try await client.getCredential(again)
        #expect(WebAuthnFixtures.credentialID(of: result.credential) == credentialID)
        #expect(WebAuthnFixtures.isMade(for: "example.org", result.credential))
        ReliabilityFigures.record(test: "fault.vanishAttached", figures: [
            "reason": .string(outcome.faultyReason?.rawValue ?? "none"),
            "failedAfterMs": ReliabilityFigures.milliseconds(outcome.faultyElapsed),
            "healthyKeyMs": ReliabilityFigures.milliseconds(outcome.healthyElapsed),
            "backAfterRestartMs": ReliabilityFigures.milliseconds(recovered),
        ])
    }
}
