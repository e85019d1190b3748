import Glibc
import SystemKit

/// What /proc says about a running process, for the reliability tests:
/// open descriptors, threads, memory, and its descriptor limit.
public struct ProcessStats: Sendable, Equatable, CustomStringConvertible {
    public var descriptors: Int
    public var threads: Int
    /// VmRSS and VmHWM (the peak of VmRSS), in KiB.
    public var residentKiB: Int
    public var peakResidentKiB: Int

    /// Reads them now; nil when the process is gone.
    public init?(pid: pid_t) {
        guard let descriptors = Self.entries(in: "/proc/\(pid)/fd"), let threads = Self.entries(in: "/proc/\(pid)/task"),
            case let status = ProcFiles.statusFields(pid: pid), !status.isEmpty
        else { return nil }
        self.descriptors = descriptors
        self.threads = threads
        residentKiB = status["VmRSS"] ?? 0
        peakResidentKiB = status["VmHWM"] ?? 0
    }

    public var description: String {
        "\(descriptors) fds, \(threads) threads, VmRSS \(residentKiB) KiB, VmHWM \(peakResidentKiB) KiB"
    }

    /// The process's RLIMIT_NOFILE, soft and hard, from /proc/PID/limits.
    public static func fileLimit(pid: pid_t) -> (soft: Int, hard: Int)? {
        guard let limits = AtomicFile.text("/proc/\(pid)/limits"),
            let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        guard numbers.count >= 2 else { return nil }
        return (numbers[0], numbers[1])
    }

    /// The counts once the process has been quiet for a moment (the same
    /// descriptors and threads twice, `interval` apart): a baseline that no
    /// client still closing is part of.
    public static func quiet(pid: pid_t, interval: Duration = .milliseconds(100), timeout: Duration = .seconds(5)) -> ProcessStats? {
        var last = ProcessStats(pid: pid)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            blockingSleep(interval)
            let now = ProcessStats(pid: pid)
            if let now, let previous = last, now.descriptors == previous.descriptors, now.threads == previous.threads { return now }
            last = now
        }
        return last
    }

    /// Waits (10 ms steps) until the process's descriptors and threads are
    /// back to `baseline` plus the tolerances, and returns what it saw last.
    public static func settle(
        pid: pid_t, to baseline: ProcessStats, threadTolerance: Int = 0, timeout: Duration = .seconds(10)
    ) -> ProcessStats? {
        var last = ProcessStats(pid: pid)
        _ = waitUntil(timeout: timeout) {
            last = ProcessStats(pid: pid)
            guard let last else { return true }
            return last.descriptors <= baseline.descriptors && last.threads <= baseline.threads + threadTolerance
        }
        return last
    }

    private static func entries(in directory: String) -> Int? {
        directoryNames(directory)?.count
    }
}
