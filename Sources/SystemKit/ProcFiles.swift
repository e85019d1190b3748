import Glibc

/// What /proc says about a running process, read the same way by the
/// daemon's tests and the benchmarks.
public enum ProcFiles {
    /// The numeric fields of /proc/PID/status (or of one of its threads),
    /// in kB where the kernel gives kB; empty when the process is gone.
    public static func statusFields(pid: pid_t, task: pid_t? = nil) -> [String: Int] {
        let path = task.map { "/proc/\(pid)/task/\($0)/status" } ?? "/proc/\(pid)/status"
        guard let text = AtomicFile.text(path) else { return [:] }
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let tokens = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
            if let first = tokens.first, let number = Int(first) { fields[String(line[..<colon])] = number }
        }
        return fields
    }

    /// CPU time the process has used, user and system, in clock ticks
    /// (utime + stime of /proc/PID/stat, the coarse figure `ps` shows).
    public static func cpuTicks(pid: pid_t) -> Int? {
        guard let stat = AtomicFile.text("/proc/\(pid)/stat"), let end = stat.lastIndex(of: ")") else { return nil }
        // The command name may hold spaces; after its ')': state is field
        // 3, utime 14, stime 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// Clock ticks a second, for `cpuTicks`.
    public static let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))

}

/// This process's descriptor limit (RLIMIT_NOFILE); children inherit it.
public enum OpenFileLimit {
    public static var soft: Int { Int(clamping: current.rlim_cur) }
    public static var hard: Int { Int(clamping: current.rlim_max) }

    private static var current: rlimit {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return limit
    }

    /// Raises the soft limit to at least `count`, within the hard limit;
    /// returns the soft limit now in force.
    @discardableResult
    public static func raise(to count: Int) -> Int {
        var limit = current
        if limit.rlim_cur < rlim_t(count) {
            limit.rlim_cur = min(rlim_t(count), limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return soft
    }

    /// Raises the soft limit as far as the hard one; returns the soft
    /// limit now in force.
    @discardableResult
    public static func raiseToHard() -> Int { raise(to: hard) }
}
