import AuthProtocol
import Foundation
import TestSupport
import Testing

/// SIGKILL at random points while registrations and renames are being
/// written: after every restart the store opens and holds every write
/// the daemon acknowledged.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ReliabilityCrashTests {
    /// Kills at a random point of the writes.
    static let kills = ReliabilityScale.rounds(200)
    /// Each round asks for one registration and this many renames at once.
    static let renamesPerRound = 4
    /// Rounds before those that let the writes finish (and then kill), to
    /// learn how long the writes take.
    static let measuringRounds = 5

    /// What the test knows of the store: for each registration, the
    /// sequence number of the last name the daemon acknowledged (the name
    /// stored must be that one or a later one), and every name it sent.
    struct Ledger {
        var floor: [String: Int] = [:]
        var sequence = 0
        var creates = 0
        var renames = 0
        var acknowledged = 0
        var acknowledgedBeforeKill = 0
        var lost: [String] = []

        mutating func nextName() -> String {
            sequence += 1
            return "n\(sequence)"
        }

        static func number(_ name: String?) -> Int? { name.flatMap { Int($0.dropFirst()) } }

        /// A reply the daemon sent: the write it answers is durable.
        mutating func acknowledge(_ registration: JSONValue?, beforeKill: Bool) {
            guard let id = registration?["id"]?.stringValue, let name = Self.number(registration?["friendlyName"]?.stringValue) else { return }
            floor[id] = max(floor[id] ?? 0, name)
            acknowledged += 1
            if beforeKill { acknowledgedBeforeKill += 1 }
        }

        /// Checks the store as the daemon lists it after a restart; learns
        /// registrations that were written but not acknowledged.
        mutating func check(_ listed: [JSONValue], round: Int) {
            var stored: [String: Int] = [:]
            for registration in listed {
                guard let id = registration["id"]?.stringValue, let name = Self.number(registration["friendlyName"]?.stringValue),
                    name <= sequence
                else {
                    lost.append("round \(round): a registration the test never made: \(registration.jsonText)")
                    continue
                }
                stored[id] = name
            }
            for (id, floor) in floor {
                guard let name = stored[id] else {
                    lost.append("round \(round): registration \(id) (acknowledged as n\(floor)) is gone")
                    continue
                }
                if name < floor { lost.append("round \(round): \(id) is n\(name), but n\(floor) was acknowledged or seen") }
            }
            if listed.count > creates { lost.append("round \(round): \(listed.count) registrations from \(creates) requests") }
            // What the store holds now is durable too, acknowledged or not:
            // no later restart may lose it or bring back an older name.
            for (id, name) in stored { floor[id] = max(floor[id] ?? 0, name) }
        }
    }

    /// The listing of the store.
    func registrations(_ client: RawRPCClient) -> [JSONValue]? {
        client.request(1, Method.listRegistrations)
        return client.readReply()?["result"]?["registrations"]?.arrayValue
    }

    /// Waits (at most 10 s) for the daemon's key to come up.
    func waitForKey(_ client: RawRPCClient) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        var attempt = 100
        while ContinuousClock.now < deadline {
            client.request(attempt, Method.listAuthenticators)
            guard let reply = client.readReply(timeout: .seconds(1)) else { return false }
            if reply["result"]?["authenticators"]?.arrayValue?.count == 1 { return true }
            attempt += 1
            usleep(5_000)
        }
        return false
    }

    @Test func sigkillDuringWritesLosesNoAcknowledgedWrite() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let arguments = ["--virtual-key", "name=Crash,state=\(directory.file("key.state"))"]
        let registrationsDirectory = directory.file("state/registrations")
        var ledger = Ledger()
        let clock = ContinuousClock()
        let started = clock.now
        var restarts: [Duration] = []
        var writeWindow: Duration = .zero
        var killedMidBatch = 0
        var killedMidFile = 0
        let rounds = Self.measuringRounds + Self.kills

        for round in 0...rounds {
            // A kill in the middle of replacing the file leaves its temporary.
            if (try? FileManager.default.contentsOfDirectory(atPath: registrationsDirectory))?.contains(where: { $0.contains(".tmp.") }) == true {
                killedMidFile += 1
            }
            let restarting = clock.now
            let daemon = try DaemonProcess(arguments, directory: directory)
            let client = try RawRPCClient(socketPath: daemon.socketPath)
            // The store opens and holds every acknowledged write.
            let listed = try #require(registrations(client), "round \(round): registrations.list failed; log:\n\(daemon.log)")
            ledger.check(listed, round: round)
            #expect(ledger.lost.isEmpty, "\(ledger.lost)")
            if !ledger.lost.isEmpty { return }
            #expect(!FileManager.default.fileExists(atPath: registrationsDirectory + "/\(getuid()).json.corrupt"))
            try #require(waitForKey(client), "round \(round): the key did not come up; log:\n\(daemon.log)")
            restarts.append(clock.now - restarting)
            if round == rounds { break }

            // One registration and renames of known ones, all at once.
            let params = try JSONValueEncoder().encode(WebAuthnFixtures.createParams(userID: Array("user-\(round)".utf8)))
            client.request(2, Method.createCredential, params)
            ledger.creates += 1
            let targets = ledger.floor.keys.shuffled().prefix(Self.renamesPerRound)
            for (index, id) in targets.enumerated() {
                client.request(10 + index, Method.renameRegistration, ["id": .string(id), "friendlyName": .string(ledger.nextName())])
            }
            ledger.renames += targets.count
            // The first rounds run to the end, to learn how long the writes
            // take; every later one is killed at a random point of that
            // (and a little after).
            let measuring = round < Self.measuringRounds
            let killAt = measuring ? nil : Int.random(in: 0...max(1, writeWindow.wholeMilliseconds * 1200))
            let killed = KillTimer(pid: daemon.process.processIdentifier, afterMicroseconds: killAt)
            var outstanding = 1 + targets.count
            while outstanding > 0, let message = client.readMessage(timeout: .seconds(5)) {
                let receivedBeforeKill = !killed.hasFired
                if message.method == Prompt.Kind.describeAuthenticator.method {
                    client.answer(message, with: ["action": "proceed", "friendlyName": .string(ledger.nextName())])
                } else if message.method == nil {
                    outstanding -= 1
                    let result = message["result"]
                    ledger.acknowledge(message["id"] == 2 ? result?["registration"] : result, beforeKill: receivedBeforeKill)
                }
            }
            if measuring { writeWindow = max(writeWindow, clock.now - restarting - restarts[round]) }
            if outstanding > 0 { killedMidBatch += 1 }
            killed.fireNow()
            daemon.process.waitUntilExit()
        }
        let elapsed = clock.now - started
        // The kills did land in the middle of the writes, after some were
        // acknowledged: the check above was not met by a store never written.
        #expect(killedMidBatch > 0, "no kill came before every reply of its round")
        #expect(ledger.acknowledgedBeforeKill > 0 && ledger.floor.count > 1, "\(ledger.acknowledgedBeforeKill) writes acknowledged, \(ledger.floor.count) registrations")
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: registrationsDirectory))?.filter { $0.contains(".tmp.") } ?? []
        #expect(leftovers.isEmpty, "temporary files left by killed writes: \(leftovers)")
        let restartTimes = LatencySummary(restarts)
        ReliabilityFigures.record(test: "crash.sigkillDuringWrites", figures: [
            "kills": ReliabilityFigures.count(Self.kills),
            "measuringRounds": ReliabilityFigures.count(Self.measuringRounds),
            "killedWithWritesOutstanding": ReliabilityFigures.count(killedMidBatch),
            "killedWhileReplacingTheFile": ReliabilityFigures.count(killedMidFile),
            "registrationsRequested": ReliabilityFigures.count(ledger.creates),
            "renamesRequested": ReliabilityFigures.count(ledger.renames),
            "acknowledged": ReliabilityFigures.count(ledger.acknowledged),
            "acknowledgedBeforeKill": ReliabilityFigures.count(ledger.acknowledgedBeforeKill),
            "registrations": ReliabilityFigures.count(ledger.floor.count),
            "lost": ReliabilityFigures.count(ledger.lost.count),
            "writeWindowMs": ReliabilityFigures.milliseconds(writeWindow),
            "restartMedianMs": ReliabilityFigures.milliseconds(restartTimes.median),
            "restartMaxMs": ReliabilityFigures.milliseconds(restartTimes.maximum),
            "seconds": ReliabilityFigures.seconds(elapsed),
        ])
    }
}

/// SIGKILL for a process after a delay, from another thread; `hasFired`
/// tells whether it has been sent.
final class KillTimer: @unchecked Sendable {
    private let pid: pid_t
    private let lock = NSLock()
    private var fired = false

    init(pid: pid_t, afterMicroseconds delay: Int?) {
        self.pid = pid
        guard let delay else { return }
        runLater(after: .microseconds(delay)) { [self] in fireNow() }
    }

    var hasFired: Bool { lock.withLock { fired } }

    /// Sends SIGKILL now, unless it has been sent.
    func fireNow() {
        lock.withLock {
            guard !fired else { return }
            fired = true
            kill(pid, SIGKILL)
        }
    }
}
