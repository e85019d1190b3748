import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// A key busy with another host's transaction, against the real programs:
/// python-fido2, an independent host, takes the virtual key's `busy` fault
/// for CTAPHID's ERR_CHANNEL_BUSY and waits it out, as it would a real
/// key's; and the daemon,
/// attached to such a key over a socket, waits for it (at the bring-up and
/// in a request) instead of dropping it. (The lifecycle, the statuses and
/// a locked node are tested in process: AuthDaemonTests.KeySharingTests;
/// hidraw and the programs that share it, in the VM test.)
@Suite(.timeLimit(.minutes(2))) struct KeySharingTests {
    @Test func pythonFIDO2WaitsOutTheBusyFaultAsAChannelBusyKey() throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let socket = directory.file("virtkey.sock")
        let key = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", socket, "--fault", "busy", "--fault-count", "2"])
        defer { key.stop() }
        #expect(waitUntil { access(socket, F_OK) == 0 })
        let seen = try PythonFIDO2.getInfoOutcomes(socket: socket, count: 3)
        #expect(seen.outcomes == ["ok", "ok", "ok"])
        #expect(seen.busyAnswers == 2, "python-fido2 was told the channel was busy twice, then served")
    }

    @Test func anAttachedKeyThatIsBusyComesUpAndServesAfterItsBusySpell() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let socket = directory.file("virtkey.sock")
        let key = try BackgroundProcess(
            builtProduct("authkeyd-virtkey"), ["--socket", socket, "--name", "Busy Socket Key", "--fault", "busy", "--fault-count", "5"])
        defer { key.stop() }
        #expect(waitUntil { access(socket, F_OK) == 0 })
        let daemon = try DaemonProcess(["--attach", "unix:\(socket)"], directory: directory)
        #expect(try await daemon.waitForKeys(1).map(\.id) == ["s1"])
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        let credential = try await client.createCredential(WebAuthnFixtures.createParams(authenticator: "s1"))
        #expect(WebAuthnFixtures.isMade(for: "example.org", credential.credential))
        #expect(try await client.listAuthenticators().map(\.id) == ["s1"], "never dropped, so never found again as s2")
        #expect(daemon.log.contains("is in use by another program; waiting for it"), "\(daemon.log)")
    }
}
