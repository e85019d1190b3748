import Foundation
import TestSupport
import Testing

/// A whole `ssh` login to Debian's sshd on 127.0.0.1 with a security key
/// enrolled through the provider: once with `SecurityKeyProvider`, once
/// through `ssh-agent -P` and `ssh-add -S`. sshd is the judge: it checks
/// the signature against authorized_keys, and the touch flag in it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct OpenSSHLoginTests {
    /// The daemon with one virtual key made from `spec`, a user with an
    /// ed25519-sk key in HOME/id enrolled on it (with `options`; askpass
    /// answers `pin`), and sshd accepting that key for root, with
    /// `keyOptions` in front of it in authorized_keys.
    func started(_ spec: String = "name=K1", pin: String = "", options: [String] = [], keyOptions: String = "") async throws
        -> (DaemonProcess, OpenSSHUser, publicKey: String, SSHServer)
    {
        let daemon = try DaemonProcess(["--virtual-key", spec])
        _ = try await daemon.waitForKeys(1)
        let user = try OpenSSHUser(socketPath: daemon.socketPath)
        try user.answerPINPrompts(with: pin)
        let publicKey = try user.enroll("ed25519-sk", options: options)
        let authorized = keyOptions.isEmpty ? publicKey : "\(keyOptions) \(publicKey)"
        return (daemon, user, publicKey, try SSHServer(authorizedKeys: authorized))
    }

    /// What the remote command prints: a word no other run could print.
    static func nonce() -> String { "logged-in-\(UInt64.random(in: 0...UInt64.max))" }

    @Test func sshLogsInWithSecurityKeyProvider() async throws {
        let (daemon, user, _, server) = try await started()
        let nonce = Self.nonce()
        let login = try user.ssh(
            to: server, identityFile: user.file("id"), options: ["SecurityKeyProvider=\(user.provider)"], command: "echo \(nonce)")
        #expect(login.succeeded, "ssh: \(login)\nsshd's log:\n\(server.log)\nauthkeyd's log:\n\(daemon.log)")
        #expect(login.standardOutput == "\(nonce)\n")
        #expect(server.log.contains("Accepted publickey for root"), "\(server.log)")
        #expect(server.log.contains("ED25519-SK"), "the key sshd accepted is the security key: \(server.log)")
    }

    /// A `-O verify-required` key, and sshd told so (`verify-required` in
    /// authorized_keys: it refuses a signature without user verification).
    /// ssh tries without a PIN, the provider answers that one is needed, and
    /// ssh asks it (through askpass) and signs again.
    @Test func sshAsksThePINOfAVerifyRequiredKey() async throws {
        let pin = "Kq7x-pin"
        let (daemon, user, _, server) = try await started(
            "name=K1,pin=\(pin)", pin: pin, options: ["verify-required"], keyOptions: "verify-required")
        let nonce = Self.nonce()
        let login = try user.ssh(
            to: server, identityFile: user.file("id"), options: ["SecurityKeyProvider=\(user.provider)"], command: "echo \(nonce)")
        #expect(login.succeeded, "ssh: \(login)\nsshd's log:\n\(server.log)\nauthkeyd's log:\n\(daemon.log)")
        #expect(login.standardOutput == "\(nonce)\n")
        #expect(user.askpassPrompts.contains { $0.contains("Enter PIN for ED25519-SK key") }, "\(user.askpassPrompts)")
        #expect(!daemon.log.contains(pin) && !server.log.contains(pin), "a PIN in a log")
    }

    /// The agent holds the key and runs the provider: ssh has only the
    /// public half and the built-in provider (`internal`, which finds no
    /// key here), so the login can only have been signed by the agent.
    @Test func sshLogsInThroughSSHAgent() async throws {
        let (daemon, user, publicKey, server) = try await started()
        let agentSocket = user.file("agent.sock")
        // -D: in the foreground, a child of the test. -P: the provider's
        // path is allowed (the default list is /usr/lib*/*,/usr/local/lib*/*).
        let agent = try user.start("ssh-agent", ["-D", "-a", agentSocket, "-P", user.provider])
        try #require(
            waitUntil(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: agentSocket) },
            "ssh-agent made no socket: \(agent.standardError)")
        let inAgent = ["SSH_AUTH_SOCK": agentSocket]

        let added = try user.run("ssh-add", ["-S", user.provider, user.file("id")], environment: inAgent)
        try #require(added.succeeded, "ssh-add -S: \(added)\nssh-agent: \(agent.standardError)")
        let listed = try user.run("ssh-add", ["-L"], environment: inAgent)
        #expect(listed.succeeded && listed.standardOutput.contains(publicKeyPart(publicKey)), "ssh-add -L: \(listed)")

        try publicKey.write(toFile: user.file("public-only.pub"), atomically: true, encoding: .utf8)
        let nonce = Self.nonce()
        let login = try user.ssh(
            to: server, identityFile: user.file("public-only.pub"),
            options: ["IdentityAgent=\(agentSocket)", "SecurityKeyProvider=internal"], command: "echo \(nonce)")
        #expect(
            login.succeeded,
            "ssh: \(login)\nssh-agent: \(agent.standardError)\nsshd's log:\n\(server.log)\nauthkeyd's log:\n\(daemon.log)")
        #expect(login.standardOutput == "\(nonce)\n")
        #expect(server.log.contains("Accepted publickey for root"), "\(server.log)")
        #expect(agent.isRunning, "ssh-agent is still there: \(agent.standardError)")
    }
}
