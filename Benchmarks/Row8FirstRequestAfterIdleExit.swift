import AuthClient
import AuthProtocol
import Glibc
import SystemKit

/// Row 8: what `exit-idle` costs the user: the first request after the
/// daemon exited idle (the connection waits while the daemon starts)
/// against the same request to the daemon still running.
func firstRequestAfterIdleExit(_ settings: Settings) throws -> Row {
    var row = Row(8, "first request after an idle exit (start included) vs a warm daemon, connect → answer", target: "none: a figure for the record")
    let cycles = settings.pick(full: 20, quick: 4)
    let directory = try ScratchDirectory("authkeyd-bench")
    let socket = directory.file("authkeyd.sock")
    guard let activator = currentEnvironment()["AUTHKEYD_BENCH_ACTIVATOR"], access(activator, R_OK) == 0 else {
        throw BenchError("AUTHKEYD_BENCH_ACTIVATOR names Tests/Tools/socket_activator.py (scripts/bench sets it)")
    }
    let output = directory.file("activator.out")
    let pid = try spawn(
        "/usr/bin/python3",
        ["-u", activator, socket, directory.file("authkeyd.log"), builtProduct("authkeyd"), "--usb", "no", "--exit-idle", "100ms",
         "--state-dir", directory.file("state"), "--virtual-key", "name=K1"],
        environment: childEnvironment(), outputPath: output)
    defer {
        kill(pid, SIGTERM)
        reap(pid, timeoutMilliseconds: 5000)
    }
    func exits() -> Int { DaemonUnderTest.read(output).split(separator: "\n").filter { $0.hasPrefix("exited") }.count }
    guard waitFor(milliseconds: 5000, { DaemonUnderTest.read(output).contains("listening") }) else { throw BenchError("the activator did not listen") }

    /// connect, hello, authenticators.list with the key in it: ms.
    func request() throws -> Double {
        let start = now()
        let client = try BlockingClient(socketPath: socket)
        _ = try client.call(Method.hello, params: ["client": "bench"])
        let list = try client.call(Method.listAuthenticators)
        guard list["authenticators"]?.arrayValue?.count == 1 else { throw BenchError("the key was not listed: \(list)") }
        return milliseconds(start, now())
    }
    var cold: [Double] = [], warm: [Double] = []
    for cycle in 0...cycles {
        let exited = exits()
        let first = try request()
        let second = try request()
        // The first cycle brings the binary into the page cache: not counted.
        if cycle > 0 {
            cold.append(first)
            warm.append(second)
        }
        guard waitFor(milliseconds: 10_000, { exits() > exited }) else { throw BenchError("the daemon did not exit idle") }
    }
    let coldD = Distribution(cold), warmD = Distribution(warm)
    row.measured = "after an idle exit p50 \(fixed(coldD.p50, 1)) ms (p90 \(fixed(coldD.p90, 1)) ms); warm p50 \(fixed(warmD.p50, 2)) ms; "
        + "the exit costs \(fixed(coldD.p50 - warmD.p50, 1)) ms once per idle period"
    row.verdict = .reported
    row.method = [
        "`authkeyd --exit-idle 100ms` (release build, one virtual key) behind a stand-in for systemd's socket",
        "(`Tests/Tools/socket_activator.py`: it holds the listening socket, and starts the daemon with it as fd 3 when a",
        "connection waits, as `authkeyd.socket` does). Each cycle: a client connects, says hello and lists the keys",
        "(timed from `connect` to the list with the key in it) while no daemon runs, so the daemon's start and its",
        "key's are in the time; at once a second client does the same to the running daemon; then the bench waits",
        "for the idle exit. \(cycles) cycles after one untimed. The activator is Python, so its fork and exec are a",
        "little slower than systemd's. (`Benchmarks/Row8FirstRequestAfterIdleExit.swift`)",
        "",
        "- first request after an idle exit: \(coldD.summary(1))",
        "- the next request, daemon running: \(warmD.summary(2))",
    ]
    return row
}

/// Polls `condition` every millisecond, for up to `milliseconds`.
func waitFor(milliseconds: Int, _ condition: () -> Bool) -> Bool {
    let deadline = now() + UInt64(milliseconds) * 1_000_000
    while now() < deadline {
        if condition() { return true }
        pause(milliseconds: 1)
    }
    return condition()
}
