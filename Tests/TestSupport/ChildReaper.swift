import Foundation
import Glibc

/// Makes every process a test starts die with the test process, however
/// the test process ends (a failed `#require`, a crash, SIGKILL).
///
/// `PR_SET_PDEATHSIG` is not used: it fires when the *thread* that
/// spawned the child exits (prctl(2)), and tests spawn from Swift
/// concurrency's and libdispatch's pool threads, which exit when idle; a
/// daemon would be killed in the middle of its test. Instead one sentinel
/// (`sh`, started on first use) reads, on a pipe whose only write end
/// this process holds (close-on-exec, so no child inherits it), the pid
/// and start time of each child spawned. When this process ends, for any
/// reason, the kernel closes the write end; the sentinel reads end of file
/// and SIGKILLs each child still running (its process group too, when it
/// leads one) whose start time still matches, so a reused pid is spared.
public enum ChildReaper {
    /// What the sentinel runs: collects `pid start` lines until end of
    /// file, then kills what is left.
    public static let sentinelScript = """
        trap '' INT TERM HUP
        children=""
        while read -r pid start; do children="$children $pid:$start"; done
        for child in $children; do
            pid=${child%:*}
            now=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f20) || continue
            [ "$now" = "${child#*:}" ] || continue
            kill -KILL -- "-$pid" 2>/dev/null
            kill -KILL "$pid" 2>/dev/null
        done
        exit 0
        """

    /// The write end of the sentinel's pipe, or -1 when it could not start
    /// (then children are not watched; the tests still run).
    private static let started: (pid: pid_t, writer: Int32) = startSentinel()
    private static var sentinel: Int32 { started.writer }

    /// The sentinel's pid and the write end of its pipe (-1 when it did
    /// not start), for the test that checks it is in place.
    public static var sentinelProcess: (pid: pid_t, writer: Int32) { started }

    /// Hands `pid`, just spawned, to the sentinel.
    public static func watch(_ pid: pid_t) {
        guard sentinel >= 0, pid > 0, let start = startTime(of: pid) else { return }
        let line = Array("\(pid) \(start)\n".utf8)
        // Lines are shorter than PIPE_BUF: each write is atomic.
        _ = line.withUnsafeBytes { write(sentinel, $0.baseAddress, $0.count) }
    }

    /// Field 22 of /proc/PID/stat (the start time in clock ticks since
    /// boot): with the pid, it names one process.
    public static func startTime(of pid: pid_t) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }

    private static func startSentinel() -> (pid: pid_t, writer: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let reader = ends[0], writer = ends[1]
        defer { close(reader) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, reader, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        // Nothing else open here may live on in the sentinel, which lasts
        // as long as the test process: among what it would inherit is the
        // descriptor through which Foundation's `Process` learns that a
        // child ended, and `waitUntilExit` would then wait for ever.
        _ = closeFrom(3, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group: a ^C to the test run's group leaves the
        // sentinel to do its work.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let argv = (["/bin/sh", "-c", sentinelScript] as [String]).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ) == 0 else {
            close(writer)
            return (-1, -1)
        }
        return (pid, writer)
    }
}
