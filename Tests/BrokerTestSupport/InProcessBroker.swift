import AuthClient
@testable import AuthDaemon
import AuthProtocol
import Glibc
import SystemKit
import TestSupport

/// A broker run in the test's own process, with in-process virtual keys,
/// reached over `socketpair`s: the whole protocol (handshake, routing,
/// prompts, policy) with no binary started, in milliseconds.
///
/// Its clients are the same as a real daemon's: `RawRPCClient` for bytes,
/// `AuthClient` for calls. The peer of each pair is this process, so the
/// broker sees this process's uid as the client's.
///
/// A target of its own, for the test targets that run a broker
/// (AuthDaemonTests, AuthctlTests): the others do not link the daemon.
public final class InProcessBroker: Sendable {
    public let broker: Broker
    /// The state directory (registrations) and the keys' state files.
    public let directory: TemporaryDirectory

    /// A broker configured from authkeyd's flags (`--virtual-key`, …) with
    /// its registrations under a temporary directory; returns once every
    /// virtual key is in service. `log` gets its log lines (a `LogRecord`)
    /// instead of standard error.
    public init(_ arguments: [String], log: LogRecord? = nil) async throws {
        directory = TemporaryDirectory(prefix: "authkeyd-inprocess")
        guard case .run(var configuration) = try DaemonConfiguration.parse(arguments: arguments, environment: [:]) else {
            throw InProcessBrokerError("\(arguments) does not run a broker")
        }
        configuration.stateDirectory = directory.path
        // Quiet: a test's output is its assertions.
        configuration.logLevel = .error
        let logger = Logger(level: configuration.logLevel, environment: [:], sink: log?.sink)
        // The daemon's broker as `Daemon` makes it; no listener and no key
        // sources: the test hands it connections and keys itself.
        broker = Broker(configuration: configuration, logger: logger, environment: [:])
        for spec in configuration.virtualKeys {
            guard await broker.bringUpVirtualKey(spec: spec) != nil else {
                throw InProcessBrokerError("the virtual key \(spec) did not come up")
            }
        }
    }

    deinit {
        // The directory goes once the shutdown has flushed the store into it.
        let broker = broker, directory = directory
        broker.startTask {
            await broker.shutDown()
            withExtendedLifetime(directory) {}
        }
    }

    /// One end of a new `socketpair`, the other end handed to the broker as
    /// the listener hands it an accepted client.
    public func connect() throws -> Int32 {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw InProcessBrokerError("socketpair: \(SystemError("socketpair"))")
        }
        try setNonBlocking(pair[1])
        let broker = broker, served = pair[1]
        broker.queue.async { _ = broker.assumeIsolated { $0.accept(served) } }
        return pair[0]
    }

    /// A client that sends raw bytes and reads the broker's lines.
    public func rawClient() throws -> RawRPCClient { RawRPCClient(connectedDescriptor: try connect()) }

    /// A client as programs use it.
    public func client() throws -> AuthClient { AuthClient(connectedDescriptor: try connect()) }
    public func blockingClient() throws -> BlockingClient { BlockingClient(connectedDescriptor: try connect()) }

    // What the tests moved from EndToEndTests asked of the daemon process,
    // asked of the broker in process instead.

    /// The keys the broker lists (`authenticators.list`). `init` returns
    /// once every virtual key is in service: unlike a daemon process's,
    /// there is nothing to wait for.
    public func listKeys() async throws -> [Authenticator] {
        let client = try client()
        defer { client.close() }
        return try await client.listAuthenticators()
    }

    /// Shuts the broker down as authkeyd does at SIGTERM: the keys let go
    /// and their state files are final, so a test may open them itself.
    public func stop() async { await broker.shutDown() }
}

/// What a `Logger` wrote, for a test to read.
public final class LogRecord: Sendable {
    private let lines = Protected<[String]>([])

    public init() {}

    public var sink: @Sendable (LogLevel, String) -> Void { { [lines] level, text in lines.withLock { $0.append("\(level): \(text)") } } }
    public var logger: Logger { Logger(level: .debug, environment: [:], sink: sink) }
    public var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

public struct InProcessBrokerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
