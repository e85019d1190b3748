import AuthClient
import AuthProtocol

/// Row 11: what a closed key costs a request: the daemon opens the key
/// first (for an in-process virtual key a new custom-I/O connection,
/// CTAPHID INIT and libfido2's getInfo at open), then makes the call,
/// against the same request on a key still open.
///
/// Two daemons with the same in-process virtual key spec, interleaved
/// request by request so that the machine's noise falls on both alike:
/// - closed: `--key-linger 0ms`, so the key closes as soon as its queue is
///   empty and every request finds it closed;
/// - open: the default linger (500 ms), so requests a few ms apart find
///   the key open.
func closedKey(_ settings: Settings) throws -> Row {
    var row = Row(11, "a request on a closed key (open, CTAPHID INIT, the call) vs the same request on an open one, same virtual key, p50 and p99",
                  target: "added p50 ≤ 3 ms")
    let rounds = settings.pick(full: 10, quick: 2)
    let perRound = settings.pick(full: 100, quick: 10)
    let warmup = settings.pick(full: 20, quick: 5)
    // After every request, on both daemons: the linger-0 daemon closes its
    // key on the key's thread just after the answer.
    let pauseMilliseconds = 5
    let spec = "name=Bench"

    let closedDaemon = try DaemonUnderTest(["--virtual-key", spec, "--key-linger", "0ms"])
    defer { closedDaemon.stop() }
    let openDaemon = try DaemonUnderTest(["--virtual-key", spec])
    defer { openDaemon.stop() }
    // Index 0 the closed key, 1 the open one.
    let assertions = [try BenchAssertion(closedDaemon), try BenchAssertion(openDaemon)]

    for _ in 0..<warmup {
        for assertion in assertions {
            _ = try assertion.time()
            pause(milliseconds: pauseMilliseconds)
        }
    }
    var closedTimes: [Double] = [], openTimes: [Double] = []
    var pairedMedians: [Double] = []
    let cpuBefore = [closedDaemon, openDaemon].map { processCPUTime($0.pid) ?? 0 }
    for round in 1...rounds {
        progress("row 11: round \(round) of \(rounds)")
        var roundTimes: [[Double]] = [[], []]
        // Each daemon goes first in turn.
        let order = round % 2 == 1 ? [0, 1] : [1, 0]
        for _ in 0..<perRound {
            for index in order {
                roundTimes[index].append(try assertions[index].time())
                pause(milliseconds: pauseMilliseconds)
            }
        }
        pairedMedians.append(median(roundTimes[0]) - median(roundTimes[1]))
        closedTimes += roundTimes[0]
        openTimes += roundTimes[1]
    }
    let cpuEach = zip([closedDaemon, openDaemon], cpuBefore).map { daemon, before in
        Double((processCPUTime(daemon.pid) ?? 0) - before) / 1e3 / Double(rounds * perRound)
    }
    let closedD = Distribution(closedTimes), openD = Distribution(openTimes)
    let addedP50 = closedD.p50 - openD.p50
    row.measured = "added p50 \(fixed(addedP50, 3)) ms, p99 \(fixed(closedD.p99 - openD.p99, 3)) ms "
        + "(closed p50 \(fixed(closedD.p50, 3)) / p99 \(fixed(closedD.p99, 3)) ms vs open \(fixed(openD.p50, 3)) / \(fixed(openD.p99, 3)) ms)"
    if !settings.quick { row.judge(addedP50 <= 3) }
    row.method = [
        "The daemon keeps a key open only while it uses it: once the key's queue is empty it closes the key after",
        "`key-linger` (default 500 ms). A request on a key idle for longer pays for opening it before the call: for",
        "an in-process virtual key a new custom-I/O connection, CTAPHID INIT and the getInfo libfido2 sends at open.",
        "Measured: what a client waits for one assertion when the key is closed, against the same assertion when it is",
        "open. Two release `authkeyd`s, each with `--virtual-key \(spec)` and one non-discoverable credential registered",
        "on it: one with `--key-linger 0ms`, which closes its key as soon as the queue is empty, so every request finds",
        "the key closed; the other with the default linger, so every request finds it open (its requests come a little",
        "over \(2 * pauseMilliseconds) ms apart, well within 500 ms). On each the same `credentials.get` as row 1 (an allow list,",
        "presence immediate, no PIN, `authenticator` named, `userVerification: discouraged`) from a plain blocking",
        "client, timed from writing the request to reading its result. After every request, on both daemons alike, the",
        "bench waits \(pauseMilliseconds) ms, untimed: the linger-0 daemon closes its key on the key's thread just after answering,",
        "and the pause makes sure its next request finds the key closed. \(warmup) warm-up requests on each, then",
        "\(rounds) rounds of \(perRound) on each, the two daemons alternating request by request (each goes first in turn, round",
        "by round) so that the machine's noise falls on both alike. Added = closed minus open, for p50 (judged) and p99",
        "of all requests. Nothing is pinned. To reproduce: `make bench` (every row), or this row alone with",
        "`.build/release/authkeyd-bench 11` (`--quick 11` for the short rounds) once `scripts/bench` has built it",
        "and the `authkeyd` beside it. (`Benchmarks/Row11ClosedKey.swift`)",
        "",
        "- closed key (`--key-linger 0ms`): \(closedD.summary())",
        "- open key (default linger): \(openD.summary())",
        "- closed minus open, median of each round: \(pairedMedians.map { fixed($0, 3) }.joined(separator: ", ")) ms",
        "- CPU per request: closed \(fixed(cpuEach[0], 1)) µs, open \(fixed(cpuEach[1], 1)) µs "
            + "(the whole `authkeyd` process, its key included)",
    ]
    return row
}
