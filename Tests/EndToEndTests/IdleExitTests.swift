import Foundation
import Glibc
import TestSupport
import Testing

/// `exit-idle` under socket activation: the daemon exits 0 once nothing
/// has used it for the given time, the socket (held by a stand-in for
/// systemd, Tests/Tools/socket_activator.py) starts it again on the next
/// connection with nothing lost, and a client attached (`authctl watch`)
/// keeps it up. Without socket activation the setting is off.
@Suite(.timeLimit(.minutes(2)), .serialized) struct IdleExitTests {
    let directory = TemporaryDirectory(prefix: "authkeyd-idle")

    func authctl(_ socket: String, _ arguments: [String]) throws -> CommandResult {
        try run(builtProduct("authctl"), ["--socket", socket] + arguments)
    }

    @Test func theDaemonExitsWhenIdleAndTheNextConnectionStartsItWithNothingLost() throws {
        let state = directory.file("key.state")
        let activator = try SocketActivation(in: directory, [
            "--exit-idle", "700ms", "--usb", "no", "--state-dir", directory.file("state"), "--virtual-key", "name=Desk key,state=\(state)",
        ])
        defer { activator.stop() }
        #expect(activator.lines("started").isEmpty, "nothing starts the daemon before a connection")

        let registered = try authctl(activator.socket, ["--json", "register", "--rp", "example.org", "--user", "alice", "--name", "kept name"])
        try #require(registered.status == 0, "\(registered.standardError)")
        let credential = try #require(registered.standardOutput.firstMatch(of: /"id":"([^"]+)"/)?.1).description

        #expect(waitUntil(timeout: .seconds(5)) { activator.lines("exited").count == 1 }, "\(activator.output)")
        #expect(activator.lines("exited").first?.hasSuffix(" 0") == true, "exit status 0: \(activator.output)")
        #expect(fileText(activator.log).contains("exit-idle"), "\(fileText(activator.log))")

        // The next connection starts it again: the registration, the key's
        // name and the key's own state (the credential) survived.
        let listed = try authctl(activator.socket, ["registrations", "list"])
        #expect(listed.standardOutput.contains("kept name") && listed.standardOutput.contains("example.org"), "\(listed)")
        let asserted = try authctl(activator.socket, ["assert", "--rp", "example.org", "--credential", credential])
        #expect(asserted.status == 0, "the credential made before the exit still signs: \(asserted.standardError)")
        #expect(activator.lines("started").count == 2, "\(activator.output)")
    }

    @Test func anAttachedWatcherKeepsTheDaemonUp() throws {
        let activator = try SocketActivation(in: directory, ["--exit-idle", "300ms", "--usb", "no", "--state-dir", directory.file("state"), "--virtual-key"])
        defer { activator.stop() }
        let watcher = try StartedProgram(builtProduct("authctl"), ["--socket", activator.socket, "watch"])
        #expect(waitUntil { activator.lines("started").count == 1 })
        blockingSleep(.milliseconds(1500))
        #expect(activator.lines("exited").isEmpty, "the daemon left a watcher: \(activator.output)")
        watcher.signal(SIGTERM)
        _ = watcher.finish(within: .seconds(5))
        #expect(waitUntil(timeout: .seconds(5)) { activator.lines("exited").count == 1 }, "\(activator.output)")
    }

    @Test func withoutSocketActivationExitIdleIsOff() async throws {
        let daemon = try DaemonProcess(["--exit-idle", "200ms", "--virtual-key"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        blockingSleep(.milliseconds(800))
        #expect(daemon.process.isRunning, "the daemon exited with nobody to start it again")
        #expect(daemon.log.contains("is off: the socket is not systemd's"), "\(daemon.log)")
        _ = try await daemon.waitForKeys(1)
    }
}
