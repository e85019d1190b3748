import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
import Testing

/// Whatever a client sends, it gets the right JSON-RPC error or a clean
/// close, and another client connected at the same time is served throughout.
/// (The broker runs in process: nothing here needs the authkeyd binary.)
@Suite(.timeLimit(.minutes(2))) struct BadInputTests {
    let daemon: InProcessBroker
    let bystander: AuthClient

    init() async throws {
        daemon = try await InProcessBroker(["--virtual-key", "name=Bystander Key"])
        bystander = try daemon.client()
    }

    /// The other client is still served, without waiting on the bad one.
    /// (The bound is loose: the whole test suite shares two cores.)
    func expectBystanderServed(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let started = ContinuousClock.now
        let keys = try await bystander.listAuthenticators()
        #expect(keys.count == 1, sourceLocation: sourceLocation)
        #expect(ContinuousClock.now - started < .seconds(3), sourceLocation: sourceLocation)
    }

    func errorReply(to text: String) throws -> (code: Int64?, reason: String?, id: JSONValue?) {
        let client = try daemon.rawClient()
        client.send(text)
        let reply = client.readReply()
        return (reply?["error"]?["code"]?.integerValue, reply?["error"]?["data"]?["reason"]?.stringValue, reply?["id"])
    }

    @Test func invalidJSONIsAParseError() async throws {
        let reply = try errorReply(to: "{\"jsonrpc\": \"2.0\", \"id\": 1, \n")
        #expect(reply.code == -32700 && reply.reason == "parseError" && reply.id == .null)
        try await expectBystanderServed()
    }

    @Test func aNonObjectIsAnInvalidRequest() async throws {
        #expect(try errorReply(to: "[1, 2, 3]\n").code == -32600)
        #expect(try errorReply(to: "\"hello\"\n").code == -32600)
        #expect(try errorReply(to: "42\n").code == -32600)
        try await expectBystanderServed()
    }

    @Test func aWrongVersionIsAnInvalidRequest() async throws {
        let reply = try errorReply(to: #"{"jsonrpc":"1.0","id":7,"method":"authenticators.list"}"# + "\n")
        #expect(reply.code == -32600 && reply.reason == "invalidRequest" && reply.id == 7)
        #expect(try errorReply(to: #"{"id":8,"method":"authenticators.list"}"# + "\n").code == -32600)
        try await expectBystanderServed()
    }

    @Test func anUnknownMethodIsMethodNotFound() async throws {
        let reply = try errorReply(to: #"{"jsonrpc":"2.0","id":"x","method":"authenticators.explode"}"# + "\n")
        #expect(reply.code == -32601 && reply.reason == "methodNotFound" && reply.id == "x")
        try await expectBystanderServed()
    }

    @Test func wrongParameterTypesAreInvalidParams() async throws {
        let client = try daemon.rawClient()
        client.request(1, Method.authenticatorInfo, ["authenticator": 5])
        let wrongType = client.readReply()
        #expect(wrongType?["error"]?["code"] == -32602)
        #expect(wrongType?["error"]?["message"]?.stringValue?.contains("authenticator") == true)
        client.request(2, Method.authenticatorInfo, .object([:]))
        #expect(client.readReply()?["error"]?["data"]?["reason"] == "invalidParams")
        client.request(3, Method.selectAuthenticator, ["timeout": "soon"])
        #expect(client.readReply()?["error"]?["code"] == -32602)
        client.send(#"{"jsonrpc":"2.0","id":4,"method":"hello","params":[1]}"# + "\n")
        #expect(client.readReply()?["error"]?["code"] == -32602)
        // The same connection still works.
        client.request(5, Method.listAuthenticators)
        #expect(client.readReply()?["result"]?["authenticators"]?.arrayValue?.count == 1)
        try await expectBystanderServed()
    }

    @Test func aTwoMebibyteLineIsRefusedAndTheConnectionClosed() async throws {
        let client = try daemon.rawClient()
        let huge = #"{"jsonrpc":"2.0","id":1,"method":"hello","params":{"client":""# + String(repeating: "x", count: 2 << 20) + "\"}}\n"
        client.send(huge)
        let reply = client.readMessage()
        #expect(reply?["error"]?["data"]?["reason"] == "tooLarge")
        #expect(client.isClosedByPeer())
        try await expectBystanderServed()
    }

    @Test func tenThousandLevelsOfNestingAreRefused() async throws {
        let deep = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\",\"params\":{\"x\":"
            + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}}\n"
        let reply = try errorReply(to: deep)
        #expect(reply.code == -32700)
        try await expectBystanderServed()
    }

    @Test func nulBytesAreAParseError() async throws {
        let client = try daemon.rawClient()
        client.send([0, 0, 0, 0x0A])
        #expect(client.readReply()?["error"]?["code"] == -32700)
        client.send(Array(#"{"jsonrpc":"2.0","id":1,"#.utf8) + [0] + Array(#""method":"hello"}"#.utf8) + [0x0A])
        #expect(client.readReply()?["error"]?["code"] == -32700)
        client.request(2, Method.listAuthenticators)
        #expect(client.readReply()?["id"] == 2)
        try await expectBystanderServed()
    }

    @Test func halfALineThenADisconnect() async throws {
        for _ in 0..<20 {
            let client = try daemon.rawClient()
            client.send(#"{"jsonrpc":"2.0","id":1,"meth"#)
        }
        try await expectBystanderServed()
        // Still serving newcomers too (in process, its "still running").
        let newcomer = try daemon.rawClient()
        newcomer.request(1, Method.listAuthenticators)
        #expect(newcomer.readReply()?["result"]?["authenticators"]?.arrayValue?.count == 1)
    }

    @Test func notificationsFromClientsAreIgnoredAndBatchesRefused() async throws {
        let client = try daemon.rawClient()
        client.send(#"{"jsonrpc":"2.0","method":"authenticators.list"}"# + "\n")
        client.send(#"[{"jsonrpc":"2.0","id":1,"method":"hello"}]"# + "\n")
        let reply = client.readReply()
        #expect(reply?["error"]?["message"]?.stringValue?.contains("batches") == true, "the notification got no reply")
        try await expectBystanderServed()
    }
}
