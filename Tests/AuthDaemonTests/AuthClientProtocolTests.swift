import AuthClient
import AuthProtocol
import Glibc
import SystemKit
import TestSupport
import Testing

/// `AuthClient` against a peer that breaks the protocol: a line it cannot
/// read is answered to the call(s) waiting, never dropped (a dropped line
/// left its call waiting for good).
@Suite(.timeLimit(.minutes(1))) struct AuthClientProtocolTests {
    /// The daemon's end of a `socketpair`, written by hand.
    struct Peer: Sendable {
        let fd: Int32

        func send(_ line: String) throws { try UnixSocket.sendAll(fd, Array((line + "\n").utf8)) }

        /// The next line the client sent, parsed; nil at its end of the connection.
        func readLine() async throws -> JSONValue? {
            let fd = fd
            return try await offThePool { () throws -> JSONValue? in
                var line: [UInt8] = []
                var byte: UInt8 = 0
                while true {
                    guard try waitUntilReadable(fd, timeoutMilliseconds: 5000) else { throw PeerError("no line from the client within 5 s") }
                    guard recv(fd, &byte, 1, 0) == 1 else { return nil }
                    if byte == 0x0A { return try JSONParser().parse(line) }
                    line.append(byte)
                }
            }
        }
    }

    struct PeerError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    func connected() throws -> (AuthClient, Peer) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw PeerError("socketpair: \(SystemError("socketpair"))")
        }
        return (AuthClient(connectedDescriptor: pair[0]), Peer(fd: pair[1]))
    }

    /// A call started, once the peer has its request: its id.
    func started(_ method: String, on client: AuthClient, _ peer: Peer) async throws -> (Task<JSONValue, any Error>, JSONValue) {
        let call = Task { try await client.call(method, params: nil) }
        let request = try #require(try await peer.readLine())
        #expect(request["method"]?.stringValue == method)
        return (call, try #require(request["id"]))
    }

    func violation(of call: Task<JSONValue, any Error>) async -> String? {
        do {
            let result = try await call.value
            Issue.record("the call answered \(result.jsonText)")
        } catch let error as AuthClientError {
            if case .protocolViolation(let what) = error { return what }
            Issue.record("the call failed with \(error), not a protocol violation")
        } catch {
            Issue.record("the call failed with \(error)")
        }
        return nil
    }

    @Test func aBrokenAnswerWithAnIdFailsThatCallAndTheConnectionServesOn() async throws {
        let (client, peer) = try connected()
        defer { close(peer.fd) }
        let (first, firstID) = try await started("first", on: client, peer)
        let (second, secondID) = try await started("second", on: client, peer)
        // An answer to the first call, in JSON-RPC 1.0.
        try peer.send(#"{"jsonrpc":"1.0","id":\#(firstID.jsonText),"result":true}"#)
        let what = await violation(of: first)
        #expect(what?.contains("in answer to request \(firstID.jsonText)") == true, "\(what ?? "")")
        // A broken request of the daemon's (a prompt) is answered with the
        // error JSON-RPC asks for.
        try peer.send(#"{"jsonrpc":"2.0","id":"authkeyd-1","method":"ui.enterPin","params":7}"#)
        let reply = try #require(try await peer.readLine())
        #expect(reply["id"] == "authkeyd-1")
        #expect(reply["error"]?["data"]?["reason"] == "invalidRequest", "\(reply.jsonText)")
        // The second call is still waiting, and answered.
        try peer.send(#"{"jsonrpc":"2.0","id":\#(secondID.jsonText),"result":{"fine":true}}"#)
        #expect(try await second.value == ["fine": true])
    }

    @Test func aLineWithNoIdFailsEveryCallInFlightAndClosesTheConnection() async throws {
        let (client, peer) = try connected()
        defer { close(peer.fd) }
        let (first, _) = try await started("first", on: client, peer)
        let (second, _) = try await started("second", on: client, peer)
        try peer.send("this is not JSON")
        for call in [first, second] {
            let what = await violation(of: call)
            #expect(what?.contains("with no request id; the connection is closed") == true, "\(what ?? "")")
        }
        // The client closed its end, and a later call fails at once, the same way.
        #expect(try await peer.readLine() == nil)
        let later = Task { try await client.call("later", params: nil) }
        #expect(await violation(of: later)?.contains("not a JSON-RPC message") == true)
    }
}
