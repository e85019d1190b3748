import Foundation
import Glibc
import Testing

/// A program started in the background, its output going to files, that
/// the test waits for later with a deadline (`finish(within:)`); one that
/// is still running when the value goes away is killed with its process
/// group. `runWithin` is the same thing waited for at once.
public final class StartedProgram: @unchecked Sendable {
    public let pid: pid_t
    public let command: String
    public let started = ContinuousClock.now
    private let directory = TemporaryDirectory(prefix: "authkeyd-run")
    private var status: Int32?

    /// Starts `path` with `input` as its standard input; see `spawn` for
    /// the environment and `newSession`.
    public init(
        _ path: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil, newSession: Bool = false
    ) throws {
        command = ([path] + arguments).joined(separator: " ")
        let inputPath = directory.file("input")
        try input.write(toFile: inputPath, atomically: false, encoding: .utf8)
        pid = try spawn(
            path, arguments, input: inputPath, output: .files(output: directory.file("output"), error: directory.file("error")),
            environment: environment,
            newSession: newSession)
    }

    deinit {
        guard isRunning else { return }
        kill(-pid, SIGKILL)
        _ = waitUntil(timeout: .seconds(10)) { !isRunning }
    }

    private var outputPath: String { directory.file("output") }
    private var errorPath: String { directory.file("error") }
    public var standardOutput: String { fileText(outputPath) }
    public var standardError: String { fileText(errorPath) }

    /// Whether it is still running; reaps it once it has ended.
    public var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        let reaped = waitpid(pid, &raw, WNOHANG)
        if reaped == pid { status = raw }
        if reaped == -1 && errno != EINTR {
            Issue.record("waitpid \(pid): \(String(cString: strerror(errno)))")
            return false
        }
        return reaped != pid
    }

    /// Signals the program's process group.
    public func signal(_ number: Int32) { kill(-pid, number) }

    /// Waits for the end, for `timeout` at most: then it is killed (its
    /// whole process group, SIGKILL) and the result says it timed out.
    public func finish(within timeout: Duration) -> BoundedRun {
        var timedOut = false
        if !waitUntil(timeout: timeout, { !isRunning }) {
            timedOut = true
            signal(SIGKILL)
            // SIGKILL cannot be caught: the reap comes at once.
            _ = waitUntil(timeout: .seconds(10)) { !isRunning }
        }
        let elapsed = ContinuousClock.now - started
        let raw = status ?? 0
        return BoundedRun(
            command: command, status: status != nil && raw & 0x7F == 0 && !timedOut ? (raw >> 8) & 0xFF : nil,
            signal: raw & 0x7F != 0 ? raw & 0x7F : nil, timedOut: timedOut, elapsed: elapsed,
            standardOutput: standardOutput, standardError: standardError)
    }
}
