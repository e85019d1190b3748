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
            let status = Self.read("/proc/\(pid)/status")
        else { return nil }
        self.descriptors = descriptors
        self.threads = threads
        residentKiB = Self.kibibytes("VmRSS", in: status) ?? 0
        peakResidentKiB = Self.kibibytes("VmHWM", in: status) ?? 0
    }

    public var description: String {
        "\(descriptors) fds, \(threads) threads, VmRSS \(residentKiB) KiB, VmHWM \(peakResidentKiB) KiB"
    }

    /// The process's RLIMIT_NOFILE, soft and hard, from /proc/PID/limits.
    public static func fileLimit(pid: pid_t) -> (soft: Int, hard: Int)? {
        guard let limits = read("/proc/\(pid)/limits"),
            let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        guard numbers.count >= 2 else { return nil }
        return (numbers[0], numbers[1])
    }

    /// CPU time the process has used, user and system, in clock ticks
    /// (fields 14 and 15 of /proc/PID/stat; 100 a second here).
    public static func cpuTicks(pid: pid_t) -> Int? {
        guard let stat = read("/proc/\(pid)/stat"), let end = stat.lastIndex(of: ")") else { return nil }
        // After the command name: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// Clock ticks a second, for `cpuTicks`.
    public static let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))

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
        guard let handle = opendir(directory) else { return nil }
        defer { closedir(handle) }
        var count = 0
        while let entry = readdir(handle) {
            let isDot = directoryEntryName(entry).hasPrefix(".")
            if !isDot { count += 1 }
        }
        return count
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(fd, &chunk, chunk.count)
            guard count > 0 else { break }
            text += chunk[0..<count]
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func kibibytes(_ field: String, in status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.first
    }
}

/// This process's own descriptor limit (RLIMIT_NOFILE).
public enum OwnFileLimit {
    public static var soft: Int { Int(current.rlim_cur) }
    public static var hard: Int { Int(current.rlim_max) }

    private static var current: rlimit {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return limit
    }

    /// Raises the soft limit to at least `count` (within the hard limit);
    /// returns the soft limit now in force.
    @discardableResult
    public static func raise(to count: Int) -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(count) {
            limit.rlim_cur = min(rlim_t(count), limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return soft
    }
}
