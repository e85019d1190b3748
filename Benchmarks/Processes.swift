import Glibc
import SystemKit

// Starting the project's own binaries, and reading what the kernel says
// about a running process.

/// The release binaries built beside this one (`.build/release/…`).
func builtProduct(_ name: String) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let executable = count > 0 ? String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    let directory = executable.lastIndex(of: "/").map { String(executable[..<$0]) } ?? "."
    return "\(directory)/\(name)"
}

/// A fresh directory under /tmp, removed with everything in it.
final class ScratchDirectory {
    let path: String

    init(_ prefix: String) throws(SystemError) {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError("mkdtemp")
        }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    deinit { Self.remove(path) }

    private static func remove(_ path: String) {
        if let names = directoryNames(path) {
            for name in names { remove("\(path)/\(name)") }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

/// Starts `path` with `arguments`; standard output and error go to
/// `outputPath` (appended). Nothing else is inherited: the bench's own
/// descriptors are close-on-exec.
func spawn(_ path: String, _ arguments: [String], environment: [String: String], outputPath: String) throws(SystemError) -> pid_t {
    let output = open(outputPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    guard output >= 0 else { throw SystemError("open(\(outputPath))") }
    defer { close(output) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, output, 1)
    posix_spawn_file_actions_adddup2(&actions, output, 2)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
    guard result == 0 else { throw SystemError("posix_spawn(\(path))", code: result) }
    return pid
}

/// Waits for a child to exit, up to `timeoutMilliseconds`; SIGKILL after that.
@discardableResult
func reap(_ pid: pid_t, timeoutMilliseconds: Int) -> Int32 {
    let deadline = now() + UInt64(timeoutMilliseconds) * 1_000_000
    var status: Int32 = 0
    while true {
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid || (done < 0 && errno != EINTR) { return status }
        if now() > deadline {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            return status
        }
        pause(milliseconds: 1)
    }
}

/// Raises this process's open-file limit (its children inherit it).
func raiseOpenFileLimit(to wanted: Int) {
    if OpenFileLimit.raise(to: wanted) < wanted {
        progress("cannot raise the open-file limit to \(wanted): the hard limit is \(OpenFileLimit.hard)")
    }
}

/// The environment for children, without anything that would make them
/// think systemd started them.
func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
    var environment = currentEnvironment()
    for name in ["NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "JOURNAL_STREAM", "AUTHKEYD_SOCKET"] {
        environment[name] = nil
    }
    environment.merge(extra) { $1 }
    return environment
}

// MARK: - /proc

/// The threads of a process.
func threads(of pid: pid_t) -> [pid_t] {
    (directoryNames("/proc/\(pid)/task") ?? []).compactMap { pid_t($0) }
}

/// CPU time a whole process has used (every thread, user and system), in
/// nanoseconds: its POSIX CPU-time clock.
func processCPUTime(_ pid: pid_t) -> UInt64? {
    var clock = clockid_t()
    guard clock_getcpuclockid(pid, &clock) == 0 else { return nil }
    var time = timespec()
    guard clock_gettime(clock, &time) == 0 else { return nil }
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
