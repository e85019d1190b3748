import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// What one local user can do to another through the daemon (nothing), and
/// where a PIN can end up (nowhere but the key).
@Suite(.timeLimit(.minutes(2))) struct SecurityTests {
    /// Root's registration waits at its PIN prompt while nobody, on the
    /// same daemon, tries to cancel it by its request id, to answer the
    /// prompt in root's place, and to cancel the prompt's id: the daemon
    /// scopes every id to its connection, so none of it reaches root's
    /// operation, which then completes with root's own answer.
    @Test func anotherUserCannotCancelOrAnswerAnOperation() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv to act as another uid")
        let daemon = try DaemonProcess.openToEveryone(["--virtual-key", "name=Shared,pin=1234"])
        _ = try await daemon.waitForKeys(1)
        let owner = try RawRPCClient(socketPath: daemon.socketPath)
        owner.request(1, Method.createCredential, try JSONValueEncoder().encode(WebAuthnFixtures.createParams(authenticator: "v1")))
        let prompt = try #require(owner.readRequest(), "the PIN prompt")
        #expect(prompt["method"] == .string(Prompt.Kind.enterPin.method))
        let promptID = try #require(prompt["id"])

        let (replies, errors) = try OtherUser.exchange(
            [#"{"jsonrpc":"2.0","id":1,"method":"operation.cancel","params":{"id":1}}"#,
             #"{"jsonrpc":"2.0","id":\#(promptID.jsonText),"result":{"action":"proceed","pin":"0000"}}"#,
             #"{"jsonrpc":"2.0","id":2,"method":"operation.cancel","params":{"id":\#(promptID.jsonText)}}"#],
            socketPath: daemon.socketPath, replies: 2)
        #expect(replies.map { $0["id"] } == [1, 2], "stderr: \(errors)")
        #expect(replies.allSatisfy { $0["result"]?["cancelled"] == false })

        #expect(owner.readMessage(timeout: .milliseconds(300)) == nil, "root's operation still waits for root")
        owner.send(#"{"jsonrpc":"2.0","id":\#(promptID.jsonText),"result":{"action":"proceed","pin":"1234"}}"# + "\n")
        // The naming prompt that follows a registration: declined.
        let naming = try #require(owner.readRequest(timeout: .seconds(10)))
        #expect(naming["method"] == .string(Prompt.Kind.describeAuthenticator.method))
        owner.send(#"{"jsonrpc":"2.0","id":\#(try #require(naming["id"]).jsonText),"result":{"action":"cancel"}}"# + "\n")
        let result = try #require(owner.readReply(timeout: .seconds(10)))
        #expect(result["result"]?["credential"]?["id"]?.stringValue != nil, "\(result)")
        #expect(result["error"] == nil)
    }

    /// Distinctive PINs, set, changed, used and mistyped through the daemon
    /// and authctl with debug logging on, are found in no log line, in no
    /// file the daemon or the key wrote, and in nothing authctl printed.
    @Test func aPINUsedInARunIsInNoLogAndNoFile() async throws {
        let first = "730519", second = "846203", wrong = "999111"
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let daemon = try DaemonProcess(["--virtual-key", "name=K1,state=\(directory.file("key.state"))"], directory: directory)
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: [first]))
        _ = try await client.setPIN(on: "v1")
        client.setUI(ScriptedUI(pins: [first, second]))
        _ = try await client.changePIN(on: "v1")
        client.setUI(ScriptedUI(pins: [second], name: "Mine"))
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        client.setUI(ScriptedUI(pins: [wrong, nil]))
        await expectReason(.cancelled) {
            try await client.getCredential(WebAuthnFixtures.getParams(userVerification: .required, authenticator: "v1"))
        }
        let viaAuthctl = try authctl(daemon, ["assert", "--rp", "example.org", "--authenticator", "v1"], pinFD: "\(wrong)\n\(second)\n")
        #expect(viaAuthctl.status == 0, "\(viaAuthctl.standardError)")
        daemon.stop()

        var written: [String: [UInt8]] = ["authctl's output": Array((viaAuthctl.standardOutput + viaAuthctl.standardError).utf8)]
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.path)
        for file in files where !file.hasSuffix(".sock") {
            if let bytes = FileManager.default.contents(atPath: directory.file(file)) { written[file] = Array(bytes) }
        }
        #expect(written.keys.contains("authkeyd.log") && written.keys.contains("key.state"), "\(written.keys.sorted())")
        #expect(written.keys.contains { $0.hasPrefix("state/") }, "the registration store: \(written.keys.sorted())")
        for (name, bytes) in written {
            for pin in [first, second, wrong] {
                #expect(!bytes.contains(Array(pin.utf8)), "a PIN in \(name)")
            }
        }
    }
}

extension Array where Element == UInt8 {
    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
