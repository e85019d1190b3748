import Foundation
import TestSupport
import Testing

/// authkeyd started as systemd starts it for authkeyd.socket: a stand-in
/// (Tests/Tools/socket_activator.py) holds the socket in `directory`,
/// starts the daemon with `arguments` when a connection waits and none
/// runs, and prints each start and exit ("started PID", "exited PID
/// STATUS"); the daemon's log goes to `log`.
struct SocketActivation {
    let program: StartedProgram
    let socket: String
    let log: String

    init(in directory: TemporaryDirectory, _ arguments: [String]) throws {
        socket = directory.file("authkeyd.sock")
        log = directory.file("authkeyd.log")
        program = try StartedProgram(
            "/usr/bin/python3", [repositoryPath("Tests/Tools/socket_activator.py"), socket, log, builtProduct("authkeyd")] + arguments)
        try #require(waitUntil { program.standardOutput.contains("listening") }, "\(program.standardError)")
    }

    /// The activator's lines that start with `prefix` ("started", "exited").
    func lines(_ prefix: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    /// Every start and exit so far.
    var output: String { program.standardOutput }

    /// Stops the daemon, if it runs, and the activator.
    func stop() { program.signal(SIGTERM) }
}
