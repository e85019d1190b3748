import Foundation
import Glibc
import TestSupport
import Testing

/// ssh-keygen through the provider when the daemon is not there or goes
/// away (an error at once, never a hang), and beside another client of
/// the same key (one queue: no `flock`, no "busy").
///
/// The slow cases need a key that has an ssh key on it and then answers a
/// touch late or never: a first daemon enrolls on a virtual key kept in a
/// state file, and a second one serves the same key with the presence the
/// test needs.
@Suite(.serialized, .timeLimit(.minutes(2))) struct OpenSSHBrokerTests {
    /// A virtual key's state, shared by the daemons of one test.
    final class KeyOnDisk: Sendable {
        let directory = TemporaryDirectory(prefix: "authkeyd-key")
        var state: String { directory.file("K1.state") }

        /// A daemon serving this key with `settings` (`presence=…`).
        func daemon(_ settings: String = "") async throws -> DaemonProcess {
            let daemon = try DaemonProcess(["--virtual-key", "name=K1,state=\(state)" + (settings.isEmpty ? "" : ",\(settings)")])
            _ = try await daemon.waitForKeys(1)
            return daemon
        }
    }

    /// Starts `ssh-keygen -Y sign` of `message`, and waits until its
    /// provider has connected to `daemon` (one more client in its debug
    /// log), and a moment more for the request to reach the key (the
    /// daemon logs no request; the order a test needs is checked after).
    func startSigning(_ message: String, as user: OpenSSHUser, on daemon: DaemonProcess) throws -> StartedProgram {
        func connections() -> Int { daemon.log.components(separatedBy: "connected: uid").count }
        let before = connections()
        let signing = try user.startSigning(message)
        let connected = waitUntil(timeout: .seconds(10)) { connections() > before || !signing.isRunning }
        try #require(connected && signing.isRunning, "the provider never reached authkeyd: \(signing.standardError)\n\(daemon.log)")
        blockingSleep(.milliseconds(500))
        return signing
    }

    @Test func withoutADaemonSSHKeygenFailsAtOnceWithTheProvidersMessage() async throws {
        let user = try OpenSSHUser(socketPath: TemporaryDirectory(prefix: "authkeyd-none").file("nowhere.sock"))
        let result = try user.run(
            "ssh-keygen", ["-t", "ed25519-sk", "-w", user.provider, "-N", "", "-f", user.file("id")], timeout: .seconds(20))
        #expect(!result.timedOut && result.status != 0, "\(result)")
        #expect(result.elapsed < .seconds(5), "\(result)")
        #expect(result.standardError.contains("authkeyd-sk:"), "the provider says why: \(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: user.file("id")), "no key file")
    }

    /// The key never answers the touch; the daemon is killed (SIGKILL)
    /// while the sign waits for it: ssh-keygen fails soon after, it does not
    /// wait out the touch.
    @Test func daemonKilledMidSignIsAnErrorNotAHang() async throws {
        let key = KeyOnDisk()
        let enrolling = try await key.daemon()
        var user = try OpenSSHUser(socketPath: enrolling.socketPath)
        _ = try user.enroll("ed25519-sk")
        enrolling.stop()

        let daemon = try await key.daemon("presence=never,presence-timeout=60s")
        user.socketPath = daemon.socketPath
        let signing = try startSigning("never touched\n", as: user, on: daemon)
        let killed = ContinuousClock.now
        daemon.signal(SIGKILL)
        let result = signing.finish(within: .seconds(30))
        #expect(!result.timedOut && result.status != 0, "\(result)")
        #expect(ContinuousClock.now - killed < .seconds(10), "ssh-keygen took \(ContinuousClock.now - killed) after the kill")
        #expect(result.standardError.contains("authkeyd-sk:"), "the provider says why: \(result.standardError)")
        #expect(user.signature() == nil)
    }

    /// While ssh-keygen waits for the touch, `authctl assert` on the same
    /// key queues behind it; both succeed, the sign first, and nobody sees
    /// the key locked (libfido2's `flock`) or busy.
    @Test func authctlAssertQueuesBehindASignAndSucceeds() async throws {
        let key = KeyOnDisk()
        let enrolling = try await key.daemon()
        var user = try OpenSSHUser(socketPath: enrolling.socketPath)
        let publicKey = try user.enroll("ecdsa-sk")
        let registered = try authctl(enrolling, ["register", "--rp", "example.org", "--user", "alice", "--authenticator", "v1", "--json"])
        try #require(registered.status == 0, "register: \(registered.standardError)\n\(enrolling.log)")
        let credential = try #require(try registered.json()["credential"]?["id"]?.stringValue)
        enrolling.stop()

        let daemon = try await key.daemon("presence=after:2s")
        user.socketPath = daemon.socketPath
        let message = "signed while authctl waits\n"
        let signing = try startSigning(message, as: user, on: daemon)
        let asserting = try StartedProgram(
            builtProduct("authctl"),
            ["--socket", daemon.socketPath, "assert", "--rp", "example.org", "--credential", credential, "--authenticator", "v1"],
            newSession: true)
        blockingSleep(.milliseconds(300))
        #expect(signing.isRunning && asserting.isRunning, "both wait for the key")

        let signed = signing.finish(within: .seconds(20))
        let signedAt = ContinuousClock.now
        let asserted = asserting.finish(within: .seconds(20))
        #expect(signed.succeeded, "ssh-keygen -Y sign: \(signed)\n\(daemon.log)")
        #expect(asserted.succeeded, "authctl assert: \(asserted)\n\(daemon.log)")
        #expect(asserted.standardOutput.contains(credential), "\(asserted.standardOutput)")
        // The daemon told authctl it queued (authctl's cue for `queued`), and
        // the assert had its own touch to wait for, after the sign's.
        #expect(asserted.standardError.contains("Waiting for the key (another request is using it)"), "\(asserted.standardError)")
        #expect(ContinuousClock.now - signedAt > .seconds(1), "authctl finished with the sign: it did not queue")

        let verified = try user.verify(message, signature: try #require(user.signature()), publicKey: publicKey)
        #expect(verified.succeeded, "ssh-keygen -Y verify: \(verified)")
        for (name, text) in [("ssh-keygen", signed.standardError), ("authctl", asserted.standardError), ("authkeyd", daemon.log)] {
            #expect(!text.lowercased().contains("flock") && !text.lowercased().contains("busy"), "\(name): \(text)")
        }
    }
}
