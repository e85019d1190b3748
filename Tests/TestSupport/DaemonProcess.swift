import AuthClient
import AuthProtocol
import Foundation
import SystemKit
import Testing

/// The real `authkeyd` binary, started on a temporary socket for one test,
/// stopped (SIGTERM) when the value goes away. It is ready when it has told
/// the service manager `READY=1`: the test plays systemd's part with a
/// `NOTIFY_SOCKET` of its own.
public final class DaemonProcess: @unchecked Sendable {
    public let directory: TemporaryDirectory
    public let socketPath: String
    public let logPath: String
    public let process = Process()
    private let notifySocket: Int32

    /// Starts `authkeyd --socket DIR/authkeyd.sock --usb no` plus `arguments`;
    /// through `launcher` when given (a command that execs the rest, such as
    /// `prlimit --nofile=1024:1024`, so that the process is still the daemon).
    public init(_ arguments: [String], directory: TemporaryDirectory = TemporaryDirectory(prefix: "authkeyd"),
                environment: [String: String] = [:], waitForReady: Bool = true, launcher: [String] = []) throws {
        self.directory = directory
        socketPath = directory.file("authkeyd.sock")
        logPath = directory.file("authkeyd.log")
        // One notify socket per daemon, even when several share a directory.
        let notifyPath = directory.file("notify-\(UInt32.random(in: 0...UInt32.max)).sock")
        notifySocket = try UnixSocket.boundDatagram(path: notifyPath)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let command = launcher + [builtProduct("authkeyd")]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = command.dropFirst()
            + ["--socket", socketPath, "--usb", "no", "--log-level", "debug", "--state-dir", directory.file("state")] + arguments
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notifyPath
        env.merge(environment) { $1 }
        process.environment = env
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = FileHandle(forWritingAtPath: logPath)
        try process.run()
        ChildReaper.watch(process.processIdentifier)
        if waitForReady {
            guard let ready = receiveNotification(timeout: .seconds(15)), ready.contains("READY=1") else {
                stop()
                throw DaemonProcessError.notReady(log: log)
            }
        }
    }

    deinit {
        stop()
        close(notifySocket)
        // Under --sanitize=thread or address the daemon is instrumented too,
        // and reports into its log: a report there fails the test that ran it.
        if let report = sanitizerReport { Issue.record("authkeyd's sanitizer report:\n\(report)") }
    }

    /// The first sanitizer report in the daemon's log, if any.
    public var sanitizerReport: String? {
        let log = log
        guard let start = log.range(of: "WARNING: ThreadSanitizer") ?? log.range(of: "ERROR: AddressSanitizer")
            ?? log.range(of: "ERROR: LeakSanitizer")
        else { return nil }
        return String(log[start.lowerBound...].prefix(6000))
    }

    /// The next datagram the daemon sent to its `NOTIFY_SOCKET`.
    public func receiveNotification(timeout: Duration) -> String? {
        guard (try? waitUntilReadable(notifySocket, timeoutMilliseconds: timeout.wholeMilliseconds)) == true else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(notifySocket, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
    }

    public var log: String { fileText(logPath) }

    public func client() throws -> AuthClient { try AuthClient(socketPath: socketPath) }

    /// Sends a signal to the daemon.
    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// SIGTERM, then waits; SIGKILL after 10 s. Returns how long it took.
    @discardableResult
    public func stop() -> Duration {
        let clock = ContinuousClock()
        let started = clock.now
        guard process.isRunning else { return .zero }
        process.terminate()
        if !waitUntil(timeout: .seconds(10), { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return clock.now - started
    }

    /// Waits until `authenticators.list` shows `count` keys.
    public func waitForKeys(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [Authenticator] {
        let client = try client()
        defer { client.close() }
        let deadline = ContinuousClock.now + timeout
        while true {
            let keys = try await client.listAuthenticators()
            if keys.count >= count || ContinuousClock.now > deadline { return keys }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

public enum DaemonProcessError: Error, CustomStringConvertible {
    case notReady(log: String)
    public var description: String {
        switch self {
        case .notReady(let log): return "authkeyd did not report READY=1; its log:\n\(log)"
        }
    }
}
