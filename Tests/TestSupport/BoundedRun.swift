import Foundation
import Glibc
import Testing

// Running a program with every wait bounded: Foundation's `Process` waits
// for a child's exit on one shared thread and reads pipes until every
// holder closes them, and a test that hangs there hangs the whole run
// (`.timeLimit` cannot interrupt a blocked thread). Seen in ServiceTests.

/// Where a spawned program's standard output and error go.
public enum SpawnOutput {
    /// Appended to this file.
    case append(String)
    /// Standard output to one file, standard error to another.
    case files(output: String, error: String)
}

/// Starts a program in a process group of its own, with standard input
/// from `input` (default /dev/null), standard output and error to files,
/// and no other descriptor of the test's: a child must not hold another
/// test's pipe or socket open, which would keep that test waiting for an
/// end of file. (Foundation's `Process` closes them in its children too;
/// a plain posix_spawn would not.) Signals the test process ignores are
/// set back to their defaults. With `newSession` the program leads a
/// session of its own instead (its process group too): it has no
/// controlling terminal, so a program that would ask at /dev/tty (ssh,
/// ssh-keygen) cannot, even when the tests run from a terminal.
public func spawn(
    _ path: String, _ arguments: [String], input: String = "/dev/null", output: SpawnOutput, environment: [String: String]? = nil,
    newSession: Bool = false
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
    switch output {
    case .append(let file):
        posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    case .files(let out, let err):
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    }
    try #require(closeFrom(3, in: &actions) == 0, "posix_spawn_file_actions_addclosefrom_np failed")

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&defaults, number) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var unmasked = sigset_t()
    sigemptyset(&unmasked)
    posix_spawnattr_setsigmask(&attributes, &unmasked)
    posix_spawnattr_setpgroup(&attributes, 0)
    // setsid(2) makes the child its group's leader as well; setpgid after
    // it would fail (EPERM), so it is one or the other.
    let grouping = newSession ? posixSpawnSetSID : Int32(POSIX_SPAWN_SETPGROUP)
    posix_spawnattr_setflags(&attributes, Int16(grouping | Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)))

    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let variables = environment.map { environment in
        ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { strdup("\($0.key)=\($0.value)") } + [nil]
    }
    defer { variables?.forEach { free($0) } }
    var pid: pid_t = 0
    let result = variables.map { posix_spawn(&pid, path, &actions, &attributes, argv, $0) }
        ?? posix_spawn(&pid, path, &actions, &attributes, argv, environ)
    try #require(result == 0, "posix_spawn \(path): \(String(cString: strerror(result)))")
    ChildReaper.watch(pid)
    return pid
}

/// What a program run by `runWithin` printed, and how it ended.
public struct BoundedRun: CustomStringConvertible, Sendable {
    public var command: String
    /// The exit code, when it exited by itself.
    public var status: Int32?
    /// The signal that ended it.
    public var signal: Int32?
    public var timedOut: Bool
    public var elapsed: Duration
    public var standardOutput: String
    public var standardError: String

    public var succeeded: Bool { status == 0 && !timedOut }

    public var description: String {
        let ending =
            timedOut
            ? "did not finish in \(elapsed) and was killed"
            : status.map { "exited \($0) after \(elapsed)" } ?? "killed by signal \(signal ?? 0) after \(elapsed)"
        return "\(command) \(ending)\nstandard output:\n\(standardOutput)\nstandard error:\n\(standardError)"
    }
}

/// Runs a program to its end, but for `timeout` at most: then it is killed
/// (its whole process group, SIGKILL) and the result says so. Its output
/// goes to files, never to pipes, so that no other process holding a pipe
/// open can keep this waiting; the wait itself is a poll of waitpid with
/// WNOHANG against a deadline.
public func runWithin(
    _ timeout: Duration, _ path: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil,
    newSession: Bool = false
) throws -> BoundedRun {
    try StartedProgram(path, arguments, input: input, environment: environment, newSession: newSession).finish(within: timeout)
}
