import AuthClient
import AuthProtocol

/// Row 1: what going through the daemon adds to one assertion, against
/// libfido2 called directly on the same kind of in-process virtual key.
///
/// Three paths, interleaved round by round so that the machine's noise
/// falls on all of them alike:
/// - direct: `fido_dev_get_assert` on a virtual key in this process (row 7's path);
/// - daemon: `credentials.get` to `authkeyd`, which runs the same libfido2
///   call on the same kind of virtual key, from a plain blocking client;
/// - AuthClient: the same request through the project's client library.
func addedLatency(_ settings: Settings) async throws -> Row {
    var row = Row(1, "added latency per assertion through the daemon vs libfido2 called directly, same in-process virtual key, p50 and p99",
                  target: "p50 ≤ 0.15 ms, p99 ≤ 0.5 ms")
    let rounds = settings.pick(full: 10, quick: 2)
    let perRound = settings.pick(full: 300, quick: 100)
    let spec = "name=Bench"

    let daemon = try DaemonUnderTest(["--virtual-key", spec])
    defer { daemon.stop() }
    let assertion = try BenchAssertion(daemon)
    let getParams = assertion.params
    let library = try AuthClient(socketPath: daemon.socketPath)
    defer { library.close() }
    let direct = try DirectKey(spec: spec)

    func timeDaemon() throws -> Double { try assertion.time() }
    func timeLibrary() async throws -> Double {
        let start = now()
        _ = try await library.call("credentials.get", params: getParams)
        return milliseconds(start, now())
    }

    for _ in 0..<100 {
        _ = try direct.assert()
        _ = try timeDaemon()
        _ = try await timeLibrary()
    }
    var directTimes: [Double] = [], daemonTimes: [Double] = [], libraryTimes: [Double] = []
    var pairedMedians: [Double] = []
    // CPU per assertion: the bench's own for the direct path (libfido2 and
    // the key both run here), the daemon's for the other two.
    var directCPU: UInt64 = 0
    let daemonCPUBefore = processCPUTime(daemon.pid) ?? 0
    for round in 1...rounds {
        progress("row 1: round \(round) of \(rounds)")
        var roundDirect: [Double] = [], roundDaemon: [Double] = []
        // Each path goes first in turn.
        for path in (0..<3).map({ ($0 + round) % 3 }) {
            for _ in 0..<perRound {
                switch path {
                case 0:
                    let cpu = ownCPUTime()
                    roundDirect.append(try direct.assert())
                    directCPU += ownCPUTime() - cpu
                case 1: roundDaemon.append(try timeDaemon())
                default: libraryTimes.append(try await timeLibrary())
                }
            }
        }
        pairedMedians.append(median(roundDaemon) - median(roundDirect))
        directTimes += roundDirect
        daemonTimes += roundDaemon
    }
    let daemonCPU = (processCPUTime(daemon.pid) ?? 0) - daemonCPUBefore
    let directCPUEach = Double(directCPU) / 1e3 / Double(directTimes.count)
    let daemonCPUEach = Double(daemonCPU) / 1e3 / Double(daemonTimes.count + libraryTimes.count)
    let directD = Distribution(directTimes), daemonD = Distribution(daemonTimes), libraryD = Distribution(libraryTimes)
    let addedP50 = daemonD.p50 - directD.p50
    let addedP99 = daemonD.p99 - directD.p99
    row.measured = "added p50 \(fixed(addedP50, 3)) ms, p99 \(fixed(addedP99, 3)) ms "
        + "(daemon p50 \(fixed(daemonD.p50, 3)) / p99 \(fixed(daemonD.p99, 3)) ms vs direct \(fixed(directD.p50, 3)) / \(fixed(directD.p99, 3)) ms); "
        + "through AuthClient +\(fixed(libraryD.p50 - directD.p50, 3)) / +\(fixed(libraryD.p99 - directD.p99, 3)) ms"
    if !settings.quick { row.judge(addedP50 <= 0.15 && addedP99 <= 0.5) }
    row.method = [
        "Added latency is what a program waits for per assertion when it asks `authkeyd` instead of calling",
        "libfido2 itself: the request serialised, the socket both ways, the daemon parsing it, choosing the key",
        "named in the request, queueing the job on the key's worker thread and getting the result back onto its",
        "queue, the `operation.status` notifications it sends first, building the WebAuthn JSON, and the client",
        "parsing every line it receives. The libfido2 call on the key is the same on both sides: an in-process",
        "virtual key (`--virtual-key \(spec)` in the daemon, `VirtualKey` with the same spec in the bench), one",
        "non-discoverable credential, an allow list, presence immediate, no PIN; in the daemon `credentials.get`",
        "with `clientDataHash`, `authenticator` (no selection) and `userVerification: discouraged`, the cheapest path.",
        "",
        "The daemon side is measured from a plain blocking client (one socket, the project's JSON parser and",
        "serialiser, no threads); that is the figure judged. The same request through `AuthClient` (a reader",
        "thread and Swift concurrency continuations) is shown beside it. 100 warm-up assertions on each path, then",
        "\(rounds) rounds of \(perRound) on each, the three paths interleaved round by round (each goes first in turn)",
        "so that the machine's noise falls on all of them alike. Added = daemon minus direct, for p50 and for p99",
        "of all assertions. Nothing is pinned: the daemon's queue, its key worker and the key's firmware thread",
        "are scheduled as they would be. (`Benchmarks/Row1AddedLatency.swift`)",
        "",
        "- direct (libfido2, in process): \(directD.summary())",
        "- through the daemon (plain client): \(daemonD.summary())",
        "- through the daemon (AuthClient): \(libraryD.summary())",
        "- daemon minus direct, median of each round: \(pairedMedians.map { fixed($0, 3) }.joined(separator: ", ")) ms",
        "- CPU per assertion: direct \(fixed(directCPUEach, 1)) µs (the bench process: libfido2 and the key), "
            + "daemon \(fixed(daemonCPUEach, 1)) µs (the whole `authkeyd` process, its key included)",
    ]
    return row
}
