import AuthProtocol

/// Row 3: 1,000 clients connected at once, each calling
/// `authenticators.list` at the same moment.
func concurrentClients(_ settings: Settings) throws -> Row {
    var row = Row(3, "1,000 concurrent clients each calling `authenticators.list`", target: "p99 ≤ 10 ms, no error")
    let clients = 1000
    let rounds = settings.pick(full: 10, quick: 2)
    raiseOpenFileLimit(to: 2 * clients + 256)
    let daemon = try DaemonUnderTest(["--virtual-key", "name=K1", "--max-clients", "\(clients + 100)"])
    defer { daemon.stop() }
    _ = try daemon.waitForKeys(1)

    let connectStart = now()
    let swarm = try Swarm(count: clients, path: daemon.socketPath)
    let fds = swarm.fds
    // Every connection accepted and answering before anything is timed.
    let helloLines = (0..<clients).map { _ in
        RPCMessage.request(id: .number(1), method: "hello", params: ["protocol": 1, "client": "authkeyd-bench"]).line()
    }
    let hello = swarm.exchange(timeoutMilliseconds: 30_000, matches: { _ in true }) {
        sendLines(helloLines, on: fds, stamps: SendStamps(count: clients))
    }
    let connected = milliseconds(connectStart, now())
    var errors = errorCount(hello.lines)
    guard hello.missing == 0 && errors == 0 else {
        throw BenchError("of \(clients) clients, \(hello.missing) got no answer to hello and \(errors) an error; authkeyd's log:\n\(daemon.log.suffix(2000))")
    }

    var roundTrips: [Double] = []
    var bursts: [Double] = []
    var missing = 0
    let daemonCPUBefore = processCPUTime(daemon.pid) ?? 0
    for round in 1...rounds {
        progress("row 3: round \(round) of \(rounds)")
        let lines = (0..<clients).map { _ in
            RPCMessage.request(id: .number(Int64(round + 1)), method: "authenticators.list", params: nil).line()
        }
        let stamps = SendStamps(count: clients)
        let outcome = swarm.exchange(timeoutMilliseconds: 30_000, matches: { _ in true }) {
            sendLines(lines, on: fds, stamps: stamps)
        }
        for index in 0..<clients {
            if let received = outcome.receivedAt[index] { roundTrips.append(milliseconds(stamps[index], received)) }
        }
        missing += outcome.missing
        errors += errorCount(outcome.lines)
        let last = outcome.receivedAt.compactMap { $0 }.max() ?? stamps[0]
        bursts.append(milliseconds(stamps[0], last))
        pause(milliseconds: 50)
    }
    let daemonCPU = Double((processCPUTime(daemon.pid) ?? 0) - daemonCPUBefore) / 1e3 / Double(rounds * clients)
    let trips = Distribution(roundTrips)
    let failures = errors + missing
    row.measured = "p50 \(fixed(trips.p50, 2)) ms, p99 \(fixed(trips.p99, 2)) ms, max \(fixed(trips.max, 2)) ms; "
        + "\(failures == 0 ? "no error" : "\(failures) errors or unanswered") (\(grouped(trips.count)) round trips)"
    if !settings.quick { row.judge(trips.p99 <= 10 && failures == 0) }
    row.method = [
        "`authkeyd` (release build, one virtual key, `--max-clients \(clients + 100)`; the bench raises its own and",
        "so the daemon's open-file limit) and \(grouped(clients)) connections opened one after another and kept open;",
        "each says `hello` first, so that all are accepted and answered before anything is timed. Then, \(rounds)",
        "times, one thread sends `authenticators.list` on every connection as fast as it can (a burst: all",
        "\(grouped(clients)) requests in flight at once), while another waits on all of them with epoll and stamps",
        "each reply when epoll reports it. A round trip is that stamp minus the moment its request was sent.",
        "Errors are replies that are not results, connections closed, or replies missing after 30 s. The bench's",
        "two threads share the machine's two cores with the daemon. (`Benchmarks/Row3ConcurrentClients.swift`)",
        "",
        "- round trips: \(trips.summary(2))",
        "- whole burst, first request sent to last reply, per round: \(bursts.map { fixed($0, 1) }.joined(separator: ", ")) ms"
            + " (median \(fixed(median(bursts), 1)) ms: \(fixed(median(bursts) * 1000 / Double(clients), 1)) µs per request)",
        "- the daemon's CPU time per request: \(fixed(daemonCPU, 1)) µs",
        "- connecting the \(grouped(clients)) clients and their `hello`: \(fixed(connected, 1)) ms",
        "- errors: \(errors); unanswered: \(missing)",
    ]
    return row
}

/// Lines that are not JSON-RPC results (or are missing).
func errorCount(_ lines: [[UInt8]?]) -> Int {
    lines.count { line in
        guard let line else { return false }
        let message = line.withUnsafeBufferPointer { try? RPCMessage.parse($0) }
        if case .response? = message { return false }
        return true
    }
}
