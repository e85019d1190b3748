import AuthProtocol
import Foundation

/// Another local user for the access-policy tests: `nobody`, reached
/// through `setpriv`, which needs the tests to run as root.
public enum OtherUser {
    /// Whether the tests can act as another user here.
    public static var isAvailable: Bool { getuid() == 0 && isInstalled("setpriv") }

    /// nobody's uid, as the daemon logs it.
    public static var nobodyUID: uid_t { getpwnam("nobody")?.pointee.pw_uid ?? 65534 }

    /// `setpriv` and its arguments that make what follows run as nobody.
    public static let command = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    /// Runs `executable` as nobody.
    public static func run(_ executable: String, _ arguments: [String], input: String = "") throws -> CommandResult {
        try TestSupport.run(command[0], Array(command.dropFirst()) + [executable] + arguments, input: input)
    }

    /// Sends `messages` (JSON-RPC lines) as nobody over one connection and
    /// returns the daemon's first `replies` lines (by default one a
    /// message), parsed. A plain Python socket client: nothing of ours
    /// stands between nobody and the daemon.
    public static func exchange(
        _ messages: [String], socketPath: String, replies: Int? = nil
    ) throws -> (replies: [JSONValue], standardError: String) {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            s.sendall(sys.stdin.buffer.read()); f = s.makefile()
            for _ in range(\(replies ?? messages.count)): print(f.readline().strip())
            """
        let result = try run("/usr/bin/python3", ["-c", script, socketPath], input: messages.map { $0 + "\n" }.joined())
        let replies = result.standardOutput.split(separator: "\n").compactMap { try? JSONParser().parse(Array($0.utf8)) }
        return (replies, result.standardError)
    }
}

extension DaemonProcess {
    /// A daemon that serves every local user (`--allow-users '*'`), in a
    /// directory they can reach.
    public static func openToEveryone(_ arguments: [String]) throws -> DaemonProcess {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        chmod(directory.path, 0o755)
        return try DaemonProcess(arguments + ["--allow-users", "*"], directory: directory)
    }
}
