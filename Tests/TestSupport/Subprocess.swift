import Foundation
import Testing

/// The directory holding the package's built executables: the one the test
/// bundle itself was built into.
public let builtProductsDirectory: String = {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return (executable as NSString).deletingLastPathComponent
}()

/// The path of one of the package's executables, such as `authkeyd-virtkey`.
public func builtProduct(_ name: String) -> String { "\(builtProductsDirectory)/\(name)" }

/// What a finished command printed and how it ended.
public struct CommandResult: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

/// Runs a command to completion, feeding it `input`; after `timeout` it is
/// killed, and the test gets an issue saying so.
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil,
    timeout: Duration = .seconds(120)
) throws -> CommandResult {
    let result = try runWithin(timeout, executable, arguments, input: input, environment: environment)
    if result.timedOut { Issue.record("\(result)") }
    return CommandResult(
        status: result.status ?? 128 + (result.signal ?? SIGKILL), standardOutput: result.standardOutput,
        standardError: result.standardError)
}

/// Whether a program is on PATH.
public func isInstalled(_ program: String) -> Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(program)")
    }
}

/// A started program that is stopped (SIGTERM, then SIGKILL) when the value goes away.
public final class BackgroundProcess: @unchecked Sendable {
    public let process = Process()
    private let output = Pipe()

    public init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        ChildReaper.watch(process.processIdentifier)
    }

    deinit { stop() }

    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout`.
public func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout`.
public func eventually(timeout: Duration = .seconds(5), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
