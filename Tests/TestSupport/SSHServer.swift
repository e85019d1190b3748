import Foundation
import Glibc
import Testing

/// Debian's sshd on 127.0.0.1, for one test: its own config, host key,
/// authorized_keys and log in a temporary directory, run in the foreground
/// (`sshd -D -e`) as the test's child. It needs root (the tests run as
/// root; Tests/README.md, "Running as root"): sshd logs the user in.
public final class SSHServer: @unchecked Sendable {
    public let directory = TemporaryDirectory(prefix: "authkeyd-sshd")
    public private(set) var port: UInt16 = 0
    private var process: StartedProgram?

    /// Starts sshd accepting the keys in `authorizedKeys` (lines of
    /// authorized_keys) for root, once it says it is listening. A port
    /// another program took between the choice and sshd's bind is chosen
    /// again.
    public init(authorizedKeys: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd"),
                     "needs sshd (Debian package openssh-server; scripts/install-deps installs it)")
        try #require(getuid() == 0, "sshd logs a user in only when it runs as root")
        // sshd's privilege separation directory (Debian's unit makes it).
        mkdir("/run/sshd", 0o755)
        let hostKey = directory.file("host_ed25519")
        let keygen = try runWithin(.seconds(20), "/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey])
        try #require(keygen.succeeded, "the host key: \(keygen)")
        try authorizedKeys.write(toFile: directory.file("authorized_keys"), atomically: true, encoding: .utf8)
        for _ in 1...3 {
            port = try Self.freePort()
            try configuration(hostKey: hostKey).write(toFile: directory.file("sshd_config"), atomically: true, encoding: .utf8)
            // sshd re-executes itself: it must be started by its absolute path.
            let started = try StartedProgram("/usr/sbin/sshd", ["-D", "-e", "-f", directory.file("sshd_config")], newSession: true)
            process = started
            if waitUntil(timeout: .seconds(10), { log.contains("Server listening on 127.0.0.1 port \(port)") || !started.isRunning }),
                started.isRunning
            {
                return
            }
            started.signal(SIGKILL)
            guard log.contains("Address already in use") else { break }
        }
        Issue.record("sshd did not start listening; its log:\n\(log)")
        throw SSHServerError.notListening
    }

    deinit { process?.signal(SIGTERM) }

    /// What sshd wrote (`-e`: its log on standard error).
    public var log: String { process.map { $0.standardError + $0.standardOutput } ?? "" }

    private func configuration(hostKey: String) -> String {
        """
        Port \(port)
        ListenAddress 127.0.0.1
        HostKey \(hostKey)
        AuthorizedKeysFile \(directory.file("authorized_keys"))
        PidFile \(directory.file("sshd.pid"))
        StrictModes no
        UsePAM no
        PermitRootLogin prohibit-password
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        LogLevel VERBOSE

        """
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0, "socket: \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound, "bind 127.0.0.1:0: \(String(cString: strerror(errno)))")
        return UInt16(bigEndian: address.sin_port)
    }
}

public enum SSHServerError: Error { case notListening }

extension OpenSSHUser {
    /// `ssh root@127.0.0.1 COMMAND` to `server`, nothing of root's own
    /// (no ~/.ssh: ssh reads root's home from the password database, not
    /// HOME): no config file, known hosts in HOME, only the identity in
    /// `identityFile`, no prompts (BatchMode).
    public func ssh(to server: SSHServer, identityFile: String, options: [String] = [], command: String) throws -> BoundedRun {
        let settings = [
            "BatchMode=yes", "StrictHostKeyChecking=no", "UserKnownHostsFile=\(file("known_hosts"))",
            "GlobalKnownHostsFile=/dev/null", "IdentitiesOnly=yes", "IdentityFile=\(identityFile)",
            "PreferredAuthentications=publickey", "ConnectTimeout=10",
        ] + options
        return try run(
            "ssh", ["-F", "/dev/null"] + settings.flatMap { ["-o", $0] } + ["-p", String(server.port), "root@127.0.0.1", command])
    }
}
