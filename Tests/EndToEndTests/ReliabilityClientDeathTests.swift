import AuthProtocol
import Foundation
import TestSupport
import Testing

/// A client that dies at any step of an operation (at each prompt, queued
/// behind another client, while the key waits for a touch) frees the key
/// within a second, and a thousand such deaths leave the daemon with the
/// descriptors and threads it had.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ReliabilityClientDeathTests {
    /// Where a client dies.
    enum Step: String, CaseIterable {
        case selectAuthenticator, enterPin, confirmTransaction, describeAuthenticator, queued, waitingForTouch
    }

    /// v1 is never touched, v2 has a PIN, v3 is touched at once (so that a
    /// registration reaches ui.describeAuthenticator).
    static let keys = ["name=Untouched,presence=never", "name=PIN,pin=1234,presence=never", "name=Quick,presence=immediate"]
    static let freeWithin: Duration = .seconds(1)
    static let cycles = ReliabilityScale.rounds(1000)
    /// Cycles run before the descriptors and threads are first counted:
    /// the daemon's queues and pools start their threads on first use.
    static let warmUp = 30

    /// Clients on raw sockets, each with one request out.
    struct Rig {
        let socketPath: String
        let createOn: [String: JSONValue]
        let createAny: JSONValue
        let createVerified: JSONValue
        let confirm: JSONValue

        init(socketPath: String) throws {
            self.socketPath = socketPath
            let encoder = JSONValueEncoder()
            var createOn: [String: JSONValue] = [:]
            for key in ["v1", "v2", "v3"] { createOn[key] = try encoder.encode(WebAuthnFixtures.createParams(authenticator: key)) }
            self.createOn = createOn
            createAny = try encoder.encode(WebAuthnFixtures.createParams())
            createVerified = try encoder.encode(WebAuthnFixtures.createParams(userVerification: .required, authenticator: "v2"))
            confirm = try encoder.encode(WebAuthnFixtures.getParams(authenticator: "v1", transaction: ["Pay": "1 EUR"]))
        }

        /// A new client that has sent `method` and read up to the message `reached` accepts.
        func client(
            _ method: String, _ params: JSONValue, reaching reached: (JSONValue) -> Bool, what: String
        ) throws -> RawRPCClient {
            let client = try RawRPCClient(socketPath: socketPath)
            client.request(1, method, params)
            guard client.read(timeout: .seconds(3), until: reached) != nil else { throw DeathError.didNotReach(what) }
            return client
        }

        /// A client whose operation on `key` has started: the key is its.
        func holder(of key: String) throws -> RawRPCClient {
            try client(Method.createCredential, createOn[key]!, reaching: Rig.hasStarted, what: "an operation on \(key)")
        }

        /// The first sign that an operation holds its key: a prompt, or a
        /// status other than `queued`.
        static func hasStarted(_ message: JSONValue) -> Bool {
            message.method?.hasPrefix("ui.") == true || (message.operationStatus.map { $0 != "queued" } ?? false)
        }

        static func isPrompt(_ name: String) -> (JSONValue) -> Bool { { $0.method == name } }
        static func isStatus(_ status: String) -> (JSONValue) -> Bool { { $0.operationStatus == status } }

        /// How long after `dying` disconnects another client's operation on
        /// `key` starts.
        func timeToFree(_ key: String, after dying: RawRPCClient) throws -> Duration {
            let clock = ContinuousClock()
            dying.disconnect()
            let died = clock.now
            let probe = try holder(of: key)
            defer { probe.disconnect() }
            return clock.now - died
        }

        /// One death at `step`; how long until the key served someone else.
        func cycle(_ step: Step) throws -> Duration {
            switch step {
            case .selectAuthenticator:
                let dying = try client(
                    Method.createCredential, createAny, reaching: Rig.isPrompt(Prompt.Kind.selectAuthenticator.method), what: "selectAuthenticator")
                return try timeToFree("v1", after: dying)
            case .enterPin:
                let dying = try client(Method.createCredential, createVerified, reaching: Rig.isPrompt(Prompt.Kind.enterPin.method), what: "enterPin")
                return try timeToFree("v2", after: dying)
            case .confirmTransaction:
                let dying = try client(
                    Method.getCredential, confirm, reaching: Rig.isPrompt(Prompt.Kind.confirmTransaction.method), what: "confirmTransaction")
                return try timeToFree("v1", after: dying)
            case .describeAuthenticator:
                let dying = try client(
                    Method.createCredential, createOn["v3"]!, reaching: Rig.isPrompt(Prompt.Kind.describeAuthenticator.method), what: "describeAuthenticator")
                return try timeToFree("v3", after: dying)
            case .waitingForTouch:
                let dying = try client(Method.createCredential, createOn["v1"]!, reaching: Rig.isStatus("waitingForTouch"), what: "waitingForTouch")
                return try timeToFree("v1", after: dying)
            case .queued:
                // The holder waits for a touch; the dying client queues behind
                // it, and another behind that. Once both the dying client and
                // the holder are gone, the last in line gets the key.
                let holding = try holder(of: "v1")
                let dying = try client(Method.createCredential, createOn["v1"]!, reaching: Rig.isStatus("queued"), what: "queued")
                let next = try client(Method.createCredential, createOn["v1"]!, reaching: Rig.isStatus("queued"), what: "queued (behind)")
                defer { next.disconnect() }
                dying.disconnect()
                let clock = ContinuousClock()
                holding.disconnect()
                let freed = clock.now
                guard next.read(timeout: .seconds(3), until: Rig.hasStarted) != nil else { throw DeathError.didNotReach("the key after the queue") }
                return clock.now - freed
            }
        }
    }

    enum DeathError: Error, CustomStringConvertible {
        case didNotReach(String)
        var description: String {
            switch self {
            case .didNotReach(let what): return "no client reached \(what) within 3 s"
            }
        }
    }

    /// A client that dies while its `authenticators.info` waits behind
    /// another client's registration on the key cancels only its own
    /// request: the registration goes on to its touch.
    /// How long the key of that test waits before it is touched: long
    /// enough for the other client to queue behind the registration.
    static let slowTouch: Duration = .milliseconds(800)

    @Test func aDyingClientsQueuedInfoRequestLeavesAnotherClientsRegistrationAlone() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Slow,presence=after:\(Self.slowTouch.wholeMilliseconds)ms"])
        _ = try await daemon.waitForKeys(1)
        let registering = try daemon.client(), ui = ScriptedUI()
        registering.setUI(ui)
        let clock = ContinuousClock()
        let started = clock.now
        async let registration = registering.createCredential(WebAuthnFixtures.createParams(authenticator: "v1"))
        #expect(await eventually { ui.statusLog.contains(.waitingForTouch) })
        let asking = try RawRPCClient(socketPath: daemon.socketPath)
        asking.request(1, Method.authenticatorInfo, ["authenticator": "v1"])
        try await Task.sleep(for: .milliseconds(100))
        asking.disconnect()
        let result = try await registration
        #expect(WebAuthnFixtures.isMade(for: "example.org", result.credential))
        ReliabilityFigures.record(test: "clientDeath.queuedInfo", figures: [
            "registrationMs": ReliabilityFigures.milliseconds(clock.now - started),
            "touchAfterMs": ReliabilityFigures.milliseconds(Self.slowTouch),
        ])
    }

    @Test func aThousandDeathsAtEveryStepFreeTheKeyAndLeakNothing() async throws {
        let daemon = try DaemonProcess(Self.keys.flatMap { ["--virtual-key", $0] })
        _ = try await daemon.waitForKeys(Self.keys.count)
        let pid = daemon.process.processIdentifier
        let rig = try Rig(socketPath: daemon.socketPath)
        let steps = Step.allCases

        let atStart = try #require(ProcessStats.quiet(pid: pid))
        for cycle in 0..<Self.warmUp { _ = try rig.cycle(steps[cycle % steps.count]) }
        let baseline = try #require(ProcessStats.quiet(pid: pid))

        let clock = ContinuousClock()
        let started = clock.now
        var times: [Step: [Duration]] = [:]
        for cycle in 0..<Self.cycles {
            let step = steps[cycle % steps.count]
            let freed = try rig.cycle(step)
            #expect(freed < Self.freeWithin, "cycle \(cycle), \(step): the key was free after \(freed)")
            times[step, default: []].append(freed)
        }
        let elapsed = clock.now - started
        let peak = try #require(ProcessStats(pid: pid))
        let settled = try #require(ProcessStats.settle(pid: pid, to: baseline, timeout: .seconds(10)))
        #expect(settled.descriptors <= baseline.descriptors, "descriptors: \(baseline) before, \(settled) after")
        #expect(settled.threads <= baseline.threads, "threads: \(baseline) before, \(settled) after")
        // And the daemon still serves every key.
        for key in ["v1", "v2", "v3"] { try rig.holder(of: key).disconnect() }

        var perStep = JSONObject()
        for step in steps {
            let summary = LatencySummary(times[step] ?? [])
            perStep[step.rawValue] = .object([
                "cycles": ReliabilityFigures.count(summary.sorted.count),
                "medianMs": ReliabilityFigures.milliseconds(summary.median),
                "maxMs": ReliabilityFigures.milliseconds(summary.maximum),
            ])
        }
        let all = LatencySummary(times.values.flatMap { $0 })
        ReliabilityFigures.record(test: "clientDeath.steps", figures: [
            "cycles": ReliabilityFigures.count(Self.cycles),
            "freeMedianMs": ReliabilityFigures.milliseconds(all.median),
            "freeP99Ms": ReliabilityFigures.milliseconds(all.p99),
            "freeMaxMs": ReliabilityFigures.milliseconds(all.maximum),
            "boundMs": ReliabilityFigures.milliseconds(Self.freeWithin),
            "perStep": .object(perStep),
        ])
        ReliabilityFigures.record(test: "clientDeath.leaks", figures: [
            "cycles": ReliabilityFigures.count(Self.cycles),
            "seconds": ReliabilityFigures.seconds(elapsed),
            "fdAtStart": ReliabilityFigures.count(atStart.descriptors),
            "threadsAtStart": ReliabilityFigures.count(atStart.threads),
            "warmUpCycles": ReliabilityFigures.count(Self.warmUp),
            "fdBefore": ReliabilityFigures.count(baseline.descriptors),
            "fdPeak": ReliabilityFigures.count(peak.descriptors),
            "fdAfter": ReliabilityFigures.count(settled.descriptors),
            "threadsBefore": ReliabilityFigures.count(baseline.threads),
            "threadsPeak": ReliabilityFigures.count(peak.threads),
            "threadsAfter": ReliabilityFigures.count(settled.threads),
            "rssBeforeKiB": ReliabilityFigures.count(baseline.residentKiB),
            "rssAfterKiB": ReliabilityFigures.count(settled.residentKiB),
        ])
    }
}
