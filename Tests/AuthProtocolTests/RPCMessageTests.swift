import AuthProtocol
import Testing

@Suite struct RPCMessageTests {
    func parse(_ text: String) throws(MalformedMessage) -> RPCMessage {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in Result { () throws(MalformedMessage) in try RPCMessage.parse(buffer) } }.get()
    }

    func rejection(_ text: String) -> MalformedMessage? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsEachKindOfMessage() throws {
        #expect(try parse(#"{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":1}}"#)
            == .request(id: .number(1), method: "hello", params: ["protocol": 1]))
        #expect(try parse(#"{"jsonrpc":"2.0","method":"authenticators.added","params":{}}"#)
            == .notification(method: "authenticators.added", params: .object([:])))
        #expect(try parse(#"{"jsonrpc":"2.0","id":"p1","result":{"action":"proceed"}}"#)
            == .response(id: .string("p1"), result: ["action": "proceed"]))
        let error = try parse(#"{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"no","data":{"reason":"cancelled"}}}"#)
        #expect(error == .errorResponse(id: .number(2), error: RPCError(.cancelled, "no")))
    }

    @Test func malformedMessagesGetTheRightErrors() {
        #expect(rejection("{not json")?.error.code == -32700)
        #expect(rejection("[1,2]")?.error.code == -32600)
        #expect(rejection("42")?.error.code == -32600)
        #expect(rejection(#"{"jsonrpc":"1.0","id":7,"method":"hello"}"#)?.error.code == -32600)
        #expect(rejection(#"{"jsonrpc":"1.0","id":7,"method":"hello"}"#)?.id == .number(7), "the id is echoed when readable")
        #expect(rejection(#"{"jsonrpc":"2.0","id":7,"method":5}"#)?.error.code == -32600)
        #expect(rejection(#"{"jsonrpc":"2.0","id":7,"method":"x","params":3}"#)?.error.code == -32600)
        #expect(rejection(#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#)?.error.code == -32600)
        #expect(rejection("{\"jsonrpc\":\"2.0\",\u{0}\"id\":1}")?.error.reason == .parseError)
    }

    @Test func linesAreOneLineEach() {
        let line = RPCMessage.errorResponse(id: nil, error: RPCError(.parseError, "bad\ninput")).line()
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false)
        #expect(String(decoding: line, as: UTF8.self).contains(#""id":null"#))
        #expect(String(decoding: line, as: UTF8.self).contains(#""reason":"parseError""#))
    }

    /// The daemon's cached key list is sent through `responseLine`: a
    /// client must not be able to tell it from a reply serialized whole.
    @Test(arguments: [RPCID.number(7), .number(-3), .string("a\"b"), .string("")])
    func aResponseWithAResultSerializedBeforehandIsTheSameLine(id: RPCID) {
        let result: JSONValue = ["authenticators": [["id": "v1", "name": "Ann\u{e9}\n", "pin": true, "vendorId": 4176]], "n": .null]
        let whole = RPCMessage.response(id: id, result: result).line()
        #expect(RPCMessage.responseLine(id: id, serializedResult: result.serialized()) == whole)
    }
}
