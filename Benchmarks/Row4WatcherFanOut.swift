import AuthProtocol
import VirtualKey
import SystemKit

/// Row 4: a key attached over a socket, announced to 1,000 watchers.
func watcherFanOut(_ settings: Settings) throws -> Row {
    var row = Row(4, "an attach event delivered to 1,000 watchers", target: "last delivery ≤ 20 ms")
    let watchers = 1000
    let rounds = settings.pick(full: 10, quick: 2)
    raiseOpenFileLimit(to: 2 * watchers + 256)
    let directory = try ScratchDirectory("authkeyd-bench")
    let keyPath = directory.file("key.sock")
    let daemon = try DaemonUnderTest(["--attach", "unix:\(keyPath)", "--max-clients", "\(watchers + 100)"], in: directory)
    defer { daemon.stop() }

    let swarm = try Swarm(count: watchers, path: daemon.socketPath)
    let fds = swarm.fds
    let watchLines = (0..<watchers).map { _ in
        RPCMessage.request(id: .number(1), method: "authenticators.watch", params: nil).line()
    }
    let watching = swarm.exchange(timeoutMilliseconds: 30_000, matches: { _ in true }) {
        sendLines(watchLines, on: fds, stamps: SendStamps(count: watchers))
    }
    let refused = errorCount(watching.lines)
    guard watching.missing == 0 && refused == 0 else {
        throw BenchError("of \(watchers) watchers, \(watching.missing) got no answer and \(refused) an error")
    }

    let key = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "name=Attached"))
    let server = VirtualKeySocketServer(key: key, path: keyPath)
    let added = Array("\"authenticators.added\"".utf8)
    let removed = Array("\"authenticators.removed\"".utf8)
    let serverError = Protected<String?>(nil)

    var lastDelivery: [Double] = [], firstDelivery: [Double] = [], lastRemoval: [Double] = []
    var deliveries: [Double] = []
    var missing = 0
    let daemonCPUBefore = processCPUTime(daemon.pid) ?? 0
    for round in 1...rounds {
        progress("row 4: round \(round) of \(rounds)")
        let appeared = SendStamps(count: 1)
        let attach = swarm.exchange(timeoutMilliseconds: 10_000, matches: { contains($0, added) }) {
            appeared.set(0, now())
            do { try server.start() } catch { serverError.withLock { $0 = "\(error)" } }
        }
        if let error = serverError.withLock({ $0 }) { throw BenchError("cannot serve the key on \(keyPath): \(error)") }
        let times = attach.receivedAt.compactMap { $0 }.map { milliseconds(appeared[0], $0) }
        missing += attach.missing
        deliveries += times
        lastDelivery.append(times.max() ?? .nan)
        firstDelivery.append(times.min() ?? .nan)

        let gone = SendStamps(count: 1)
        let detach = swarm.exchange(timeoutMilliseconds: 10_000, matches: { contains($0, removed) }) {
            gone.set(0, now())
            server.stop()
        }
        missing += detach.missing
        lastRemoval.append(detach.receivedAt.compactMap { $0 }.map { milliseconds(gone[0], $0) }.max() ?? .nan)
        pause(milliseconds: 50)
    }
    let daemonCPU = Double((processCPUTime(daemon.pid) ?? 0) - daemonCPUBefore) / 1e6 / Double(rounds)
    let last = Distribution(lastDelivery), each = Distribution(deliveries)
    let spread = zip(lastDelivery, firstDelivery).map { $0 - $1 }
    row.measured = "last delivery \(fixed(last.p50, 2)) ms (median of \(rounds) attaches; max \(fixed(last.max, 2)) ms); "
        + "first \(fixed(median(firstDelivery), 2)) ms; \(missing == 0 ? "every watcher told" : "\(missing) not told")"
    if !settings.quick { row.judge(last.p50 <= 20 && missing == 0) }
    row.method = [
        "`authkeyd --attach unix:DIR/key.sock` (release build, `--max-clients \(watchers + 100)`) and \(grouped(watchers))",
        "connections that each call `authenticators.watch` and stay open. Then, \(rounds) times, the bench serves a",
        "virtual key on that path (`VirtualKeySocketServer`, the front end of `authkeyd-virtkey --socket`): the",
        "moment its listening socket is linked into place is the moment the key appears. The daemon learns of",
        "it through inotify, connects, opens the key through libfido2 (CTAPHID INIT and getInfo over the socket), and sends",
        "`authenticators.added` to every watcher. One thread waits on all \(grouped(watchers)) connections with epoll",
        "and stamps each notification when epoll reports it. The key then goes away (its server stops) and the",
        "`authenticators.removed` fan-out is timed the same way. Judged: the median over attaches of the last",
        "watcher's delivery. (`Benchmarks/Row4WatcherFanOut.swift`)",
        "",
        "- last delivery per attach: \(lastDelivery.map { fixed($0, 2) }.joined(separator: ", ")) ms",
        "- first delivery per attach (key bring-up): \(firstDelivery.map { fixed($0, 2) }.joined(separator: ", ")) ms",
        "- first to last (the fan-out itself), median: \(fixed(median(spread), 2)) ms",
        "- every delivery: \(each.summary(2))",
        "- the daemon's CPU time per attach and detach (bring-up, \(grouped(2 * watchers)) notifications): \(fixed(daemonCPU, 2)) ms",
        "- `authenticators.removed`, last delivery after the server stopped, median: \(fixed(median(lastRemoval), 2)) ms",
    ]
    return row
}
