/// Row 6: from starting `authkeyd` to its `READY=1`.
func startToReady(_ settings: Settings) throws -> Row {
    var row = Row(6, "start to `READY=1`", target: "≤ 100 ms")
    let launches = settings.pick(full: 30, quick: 5)
    let directory = try ScratchDirectory("authkeyd-bench")
    // Two launches first, untimed: the binary and its libraries in the page cache.
    for _ in 0..<2 { try DaemonUnderTest(["--virtual-key", "name=K1"], in: directory).stop() }

    var ready: [Double] = [], keyListed: [Double] = [], stopping: [Double] = []
    for launch in 1...launches {
        if launch % 10 == 1 { progress("row 6: launch \(launch) of \(launches)") }
        let daemon = try DaemonUnderTest(["--virtual-key", "name=K1"], in: directory)
        ready.append(milliseconds(daemon.spawnedAt, daemon.readyAt))
        _ = try daemon.waitForKeys(1, pollMilliseconds: 1)
        keyListed.append(milliseconds(daemon.spawnedAt, now()))
        stopping.append(daemon.stop())
    }
    let readyD = Distribution(ready), listedD = Distribution(keyListed), stopD = Distribution(stopping)
    row.measured = "p50 \(fixed(readyD.p50, 1)) ms, p90 \(fixed(readyD.p90, 1)) ms (\(launches) starts; max \(fixed(readyD.max, 1)) ms)"
    if !settings.quick { row.judge(readyD.p90 <= 100) }
    row.method = [
        "`authkeyd --virtual-key name=K1 --usb no` (release build) started \(launches) times with `posix_spawn`, after",
        "two untimed starts that bring it into the page cache. The bench plays systemd: it binds a datagram",
        "socket, passes it as `NOTIFY_SOCKET`, and stamps the `READY=1` datagram's arrival; the time runs from",
        "just before `posix_spawn`. The daemon says `READY=1` once its socket accepts clients, before its keys",
        "are up; the time until `authenticators.list` first shows the virtual key (polled every 1 ms after",
        "READY) is given too, and how long SIGTERM takes to end it. Judged: p90. (`Benchmarks/Row6StartToReady.swift`)",
        "",
        "- start to READY=1: \(readyD.summary(1))",
        "- start to the virtual key listed: \(listedD.summary(1))",
        "- SIGTERM to exit: \(stopD.summary(1))",
    ]
    return row
}
