import Glibc
import SystemKit

/// Row 5: what an idle daemon with one virtual key costs: CPU (it must not
/// poll) and memory.
func idleCost(_ settings: Settings) throws -> Row {
    var row = Row(5, "idle daemon with one virtual key, 60 s", target: "CPU ≤ 1 ms (no polling), RSS ≤ 12 MiB")
    let seconds = settings.pick(full: 60, quick: 5)
    let daemon = try DaemonUnderTest(["--virtual-key", "name=K1"])
    defer { daemon.stop() }
    _ = try daemon.waitForKeys(1)
    // The client that asked has gone; let the daemon settle (libdispatch
    // retires idle worker threads after a few seconds).
    let settle = settings.pick(full: 10, quick: 1)
    pause(milliseconds: settle * 1000)

    let pid = daemon.pid
    guard let cpuBefore = cpuNanoseconds(pid) else { throw BenchError("cannot read authkeyd's CPU time") }
    let ticksBefore = ProcFiles.cpuTicks(pid: pid) ?? 0
    let switchesBefore = contextSwitches(pid)
    progress("row 5: idle for \(seconds) s")
    pause(milliseconds: seconds * 1000)
    guard let cpuAfter = cpuNanoseconds(pid) else { throw BenchError("cannot read authkeyd's CPU time") }
    let ticksAfter = ProcFiles.cpuTicks(pid: pid) ?? 0
    let switchesAfter = contextSwitches(pid)
    let status = ProcFiles.statusFields(pid: pid)

    let cpu = Double(cpuAfter - cpuBefore) / 1e6
    let rss = Double(status["VmRSS"] ?? 0) / 1024
    let peak = Double(status["VmHWM"] ?? 0) / 1024
    let wakeups = switchesAfter.since(switchesBefore)
    row.measured = "CPU \(fixed(cpu, 3)) ms in \(seconds) s, \(wakeups) wake-ups; RSS \(fixed(rss, 1)) MiB (peak \(fixed(peak, 1)) MiB)"
    if !settings.quick { row.judge(cpu <= 1 && rss <= 12) }
    let ticksPerSecond = ProcFiles.ticksPerSecond
    row.method = [
        "`authkeyd --virtual-key name=K1` (release build, `--usb no`), started, asked once for its keys so that",
        "the virtual key is up, then left alone for \(settle) s and measured over \(seconds) s with no client connected.",
        "CPU is the process's POSIX CPU-time clock (`clock_getcpuclockid`: every thread, user and system, in",
        "nanoseconds; /proc/PID/stat's utime + stime count in \(ticksPerSecond) Hz ticks, too coarse for 1 ms, and",
        "are shown beside it). Wake-ups are the voluntary and involuntary context switches of all its threads",
        "(/proc/PID/task/*/status): a daemon that polls shows them at its polling rate. Memory is VmRSS and",
        "VmHWM from /proc/PID/status at the end. (`Benchmarks/Row5IdleCost.swift`)",
        "",
        "- CPU over \(seconds) s: \(fixed(cpu, 3)) ms (stat ticks: \(ticksAfter - ticksBefore))",
        "- context switches over \(seconds) s: \(wakeups), in threads \(switchesAfter.busiest(since: switchesBefore)); "
            + "\(switchesAfter.threads.count) threads at the end, \(switchesBefore.threads.keys.count { switchesAfter.threads[$0] == nil }) exited during the window",
        "- VmRSS \(status["VmRSS"] ?? 0) kB (anonymous \(status["RssAnon"] ?? 0) kB, file-backed \(status["RssFile"] ?? 0) kB, "
            + "shared memory \(status["RssShmem"] ?? 0) kB); VmHWM \(status["VmHWM"] ?? 0) kB; VmSize \(status["VmSize"] ?? 0) kB",
    ]
    return row
}

/// The process's CPU time in nanoseconds: its CPU-time clock, or else the
/// sum of its threads' /proc schedstat.
private func cpuNanoseconds(_ pid: pid_t) -> UInt64? {
    if let time = processCPUTime(pid) { return time }
    var total: UInt64 = 0
    for tid in threads(of: pid) {
        guard let bytes = try? AtomicFile.read("/proc/\(pid)/task/\(tid)/schedstat"),
            let first = String(decoding: bytes, as: UTF8.self).split(separator: " ").first, let ns = UInt64(first)
        else { return nil }
        total += ns
    }
    return total
}

/// Each thread's context switches (voluntary + involuntary), by thread id.
private struct ThreadSwitches {
    var threads: [pid_t: (name: String, count: Int)] = [:]

    /// Switches since `earlier`, in the threads alive at both moments or
    /// born since (an exited thread's last switches are lost with it).
    func since(_ earlier: ThreadSwitches) -> Int {
        threads.reduce(0) { $0 + $1.value.count - (earlier.threads[$1.key]?.count ?? 0) }
    }

    /// "name: n, …" for the threads that switched since `earlier`.
    func busiest(since earlier: ThreadSwitches) -> String {
        let moved = threads.map { ($0.value.name, $0.value.count - (earlier.threads[$0.key]?.count ?? 0)) }.filter { $0.1 > 0 }
        return moved.isEmpty ? "none" : moved.sorted { $0.1 > $1.1 }.map { "`\($0.0)` \($0.1)" }.joined(separator: ", ")
    }
}

private func contextSwitches(_ pid: pid_t) -> ThreadSwitches {
    var result = ThreadSwitches()
    for tid in threads(of: pid) {
        let status = ProcFiles.statusFields(pid: pid, task: tid)
        let name = (try? AtomicFile.read("/proc/\(pid)/task/\(tid)/comm")).map {
            String(decoding: $0.filter { $0 != 0x0A }, as: UTF8.self)
        } ?? "?"
        result.threads[tid] = (name, (status["voluntary_ctxt_switches"] ?? 0) + (status["nonvoluntary_ctxt_switches"] ?? 0))
    }
    return result
}
