import AuthClient
import Glibc
import SystemKit

/// The real `authkeyd` (release build) on a temporary socket, as systemd
/// would run it: the bench plays the service manager's part with a
/// `NOTIFY_SOCKET` of its own and waits for `READY=1`.
///
/// A minimal cousin of the tests' `DaemonProcess` (TestSupport, which the
/// bench does not link): no Foundation, and the start-up timed.
final class DaemonUnderTest {
    let directory: ScratchDirectory
    let socketPath: String
    let logPath: String
    let pid: pid_t
    /// `now()` just before `posix_spawn`, and when `READY=1` arrived.
    let spawnedAt: UInt64
    let readyAt: UInt64
    private let notifySocket: Int32
    private var running = true

    /// `authkeyd --socket DIR/authkeyd.sock --usb no --state-dir DIR/state`
    /// plus `arguments`.
    init(_ arguments: [String], in directory: ScratchDirectory? = nil) throws {
        let directory = try directory ?? ScratchDirectory("authkeyd-bench")
        self.directory = directory
        socketPath = directory.file("authkeyd.sock")
        logPath = directory.file("authkeyd.log")
        let notifyPath = directory.file("notify.sock")
        unlink(notifyPath)
        notifySocket = try UnixSocket.boundDatagram(path: notifyPath)
        let environment = childEnvironment(["NOTIFY_SOCKET": notifyPath])
        let all = ["--socket", socketPath, "--usb", "no", "--state-dir", directory.file("state")] + arguments
        spawnedAt = now()
        do {
            pid = try spawn(builtProduct("authkeyd"), all, environment: environment, outputPath: logPath)
        } catch {
            close(notifySocket)
            throw error
        }
        guard Self.waitForReady(notifySocket, timeoutMilliseconds: 15_000) else {
            kill(pid, SIGKILL)
            reap(pid, timeoutMilliseconds: 5000)
            close(notifySocket)
            throw BenchError("authkeyd did not report READY=1 within 15 s; its log:\n\(Self.read(logPath))")
        }
        readyAt = now()
    }

    deinit {
        stop()
        close(notifySocket)
    }

    var log: String { Self.read(logPath) }

    static func read(_ path: String) -> String {
        AtomicFile.text(path) ?? ""
    }

    /// SIGTERM, then waits for the exit (SIGKILL after 10 s). Returns the
    /// milliseconds it took.
    @discardableResult
    func stop() -> Double {
        guard running else { return 0 }
        running = false
        let start = now()
        kill(pid, SIGTERM)
        reap(pid, timeoutMilliseconds: 10_000)
        return milliseconds(start, now())
    }

    /// Connects a line client; retries briefly while the daemon sets up.
    func connect() throws -> BlockingClient { try BlockingClient(socketPath: socketPath) }

    /// Waits until `authenticators.list` shows `count` keys; returns their ids.
    func waitForKeys(_ count: Int, timeoutMilliseconds: Int = 10_000, pollMilliseconds: Int = 5) throws -> [String] {
        let client = try connect()
        let deadline = now() + UInt64(timeoutMilliseconds) * 1_000_000
        while true {
            let result = try client.call("authenticators.list")
            let ids = (result["authenticators"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            if ids.count >= count { return ids }
            if now() > deadline { throw BenchError("authkeyd shows \(ids.count) keys, not \(count), after \(timeoutMilliseconds) ms") }
            pause(milliseconds: pollMilliseconds)
        }
    }

    /// Reads notifications until one says `READY=1`.
    private static func waitForReady(_ fd: Int32, timeoutMilliseconds: Int) -> Bool {
        let deadline = now() + UInt64(timeoutMilliseconds) * 1_000_000
        var buffer = [UInt8](repeating: 0, count: 4096)
        while now() < deadline {
            let left = Int((deadline - now()) / 1_000_000) + 1
            guard (try? waitUntilReadable(fd, timeoutMilliseconds: left)) == true else { return false }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let message = String(decoding: buffer.prefix(count), as: UTF8.self)
            if message.split(separator: "\n").contains("READY=1") { return true }
        }
        return false
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
