import AuthClient
import Dispatch
import SystemKit

/// Where a run of authctl writes: its standard output and standard error.
/// The installed program's is the process's own (`StandardStreams`); a
/// test hands one that keeps the text.
public protocol ConsoleOutput: Sendable {
    /// Text for standard output, buffered as `print` buffers it.
    func write(_ text: String)
    /// Text for standard error, written at once.
    func writeError(_ text: String)
    /// Sends what standard output has buffered (watch: each key as it comes).
    func flush()
}

/// The process's standard output (C stdio's buffer, `print`'s) and
/// standard error (unbuffered).
public struct StandardStreams: ConsoleOutput {
    public init() {}
    public func write(_ text: String) { print(text, terminator: "") }
    public func writeError(_ text: String) { writeToStandardError(text) }
    public func flush() { flushStandardOutput() }
}

/// What a run of authctl meets besides its arguments: where it writes, the
/// environment it reads, the terminal it may ask at,
/// how it reaches the daemon, and the queue its session runs on.
/// `Console.process` is the installed program's; a test gives its own
/// (its output kept, no terminal, a broker in the test's process).
public struct Console: Sendable {
    public var output: any ConsoleOutput
    public var environment: [String: String]
    /// Where prompts are asked: the controlling terminal, `/dev/tty`; nil
    /// for none (authctl then runs as it does under a service or `setsid`).
    public var terminalPath: String?
    /// A stream socket connected to the daemon's socket at the path.
    public var connect: @Sendable (_ socketPath: String) throws(AuthClientError) -> Int32
    /// The queue a session's tasks run on.
    public var sessionQueue: DispatchQueue
    /// Whether the run is the whole process, and so may set its signal
    /// dispositions (watch: Ctrl-C stops it).
    public var ownsProcess: Bool

    public init(
        output: any ConsoleOutput, environment: [String: String], terminalPath: String?,
        connect: @escaping @Sendable (_ socketPath: String) throws(AuthClientError) -> Int32 = Console.connectToSocket,
        sessionQueue: DispatchQueue, ownsProcess: Bool
    ) {
        self.output = output
        self.environment = environment
        self.terminalPath = terminalPath
        self.connect = connect
        self.sessionQueue = sessionQueue
        self.ownsProcess = ownsProcess
    }

    /// The installed program's: the process's streams, environment and
    /// terminal; the session on the main queue (no thread pool to start,
    /// no hop per await).
    public static var process: Console {
        Console(
            output: StandardStreams(), environment: currentEnvironment(), terminalPath: "/dev/tty", sessionQueue: .main,
            ownsProcess: true)
    }

    /// Connects to the Unix socket at `socketPath`, as `AuthClient(socketPath:)` does.
    @Sendable public static func connectToSocket(_ socketPath: String) throws(AuthClientError) -> Int32 {
        do {
            return try UnixSocket.connect(path: socketPath, kind: .stream)
        } catch {
            throw .cannotConnect(path: socketPath, error)
        }
    }

    /// Writes a line (or `text` and `terminator`) to standard output.
    func print(_ text: String, terminator: String = "\n") {
        output.write(text + terminator)
    }

    /// The terminal this run may ask at, if it can be opened.
    func terminal() -> Terminal? {
        terminalPath.flatMap(Terminal.open)
    }
}
