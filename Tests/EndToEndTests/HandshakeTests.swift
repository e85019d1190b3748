import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// What the UI handshake needs a process for: registrations named across a
/// restart and a SIGKILL, and kept from another uid. (The handshake itself
/// is tested against the broker in process: AuthDaemonTests.HandshakeTests
/// and KeyHandshakeTests.)
@Suite(.timeLimit(.minutes(3))) struct HandshakeTests {
    @Test func friendlyNamesSurviveARestartAndASIGKILLRightAfterTheRename() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        var daemon = try DaemonProcess(["--virtual-key", "name=Named"], directory: directory)
        _ = try await daemon.waitForKeys(1)
        var client = try daemon.client()
        client.setUI(ScriptedUI(name: "Before"))
        let id = try #require(try await client.createCredential(WebAuthnFixtures.createParams()).registration?.id)
        daemon.stop()
        daemon = try DaemonProcess(["--virtual-key", "name=Named"], directory: directory)
        client = try daemon.client()
        #expect(try await client.listRegistrations().map(\.friendlyName) == ["Before"])
        _ = try await client.renameRegistration(id: id, to: "After")
        kill(daemon.process.processIdentifier, SIGKILL)
        daemon.process.waitUntilExit()
        daemon = try DaemonProcess(["--virtual-key", "name=Named"], directory: directory)
        #expect(try await daemon.client().listRegistrations().map(\.friendlyName) == ["After"])
    }

    @Test func anotherUserSeesNoneOfTheRegistrations() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv to act as another uid")
        let daemon = try DaemonProcess.openToEveryone(["--virtual-key", "name=Shared"])
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        client.setUI(ScriptedUI(name: "Mine"))
        let id = try #require(try await client.createCredential(WebAuthnFixtures.createParams()).registration?.id)
        let (replies, errors) = try OtherUser.exchange(
            [#"{"jsonrpc":"2.0","id":1,"method":"registrations.list"}"#,
             #"{"jsonrpc":"2.0","id":2,"method":"registrations.rename","params":{"id":"\#(id)","friendlyName":"Theirs"}}"#],
            socketPath: daemon.socketPath)
        #expect(replies.count == 2, "stderr: \(errors)")
        #expect(replies.first?["result"]?["registrations"]?.arrayValue?.isEmpty == true)
        #expect(replies.last?["error"]?["data"]?["reason"] == "noCredentials")
        #expect(try await client.listRegistrations().map(\.friendlyName) == ["Mine"])
    }
}
