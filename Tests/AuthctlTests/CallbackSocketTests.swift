@testable import AuthctlKit
import AuthProtocol
import Glibc
import SystemKit
import TestSupport
import Testing

/// `authctl agent`'s callback socket: a connection is the daemon's only
/// when its first line is `agent.callback` (or `agent.replaced`) with the
/// agent's token, and nobody else's connection, saying something else or
/// nothing, holds up the daemon's.
@Suite(.timeLimit(.minutes(1))) struct CallbackSocketTests {
    /// Connects to the socket and sends `line`, if any; the connection.
    static func connect(_ socket: CallbackSocket, sending line: RPCMessage? = nil) throws -> Int32 {
        let fd = try UnixSocket.connect(abstractName: socket.name, nonBlocking: false)
        if let line { try UnixSocket.sendAll(fd, line.line()) }
        return fd
    }

    static func callback(_ token: String) -> RPCMessage {
        .notification(method: Method.agentCallback, params: ["token": .string(token)])
    }

    /// What strangers were told about, kept.
    final class Strangers: Sendable {
        private let lines = Protected<[String]>([])
        var noted: [String] { lines.withLock { $0 } }
        var note: @Sendable (String) -> Void { { [lines] line in lines.withLock { $0.append(line) } } }
    }

    @Test func theNameAndTokenPassTheDaemonsRules() throws {
        let socket = try CallbackSocket.open()
        defer { socket.close() }
        #expect(AgentCallback.problem(withName: socket.name) == nil, "\(socket.name)")
        #expect(AgentCallback.problem(withToken: socket.token) == nil)
        #expect(socket.name.hasPrefix("authkeyd-agent.\(getuid())."))
        #expect(socket.registration == AgentRegisterParams(callback: socket.name, token: socket.token))
        let other = try CallbackSocket.open()
        defer { other.close() }
        #expect(other.name != socket.name && other.token != socket.token)
    }

    @Test func onlyTheTokenMakesADaemonConnectionAndStrangersAreClosed() async throws {
        let socket = try CallbackSocket.open()
        defer { socket.close() }
        let strangers = Strangers()
        let wrong = try Self.connect(socket, sending: Self.callback(String(repeating: "0", count: 64)))
        let other = try Self.connect(socket, sending: .notification(method: "hello", params: nil))
        let silent = try Self.connect(socket)
        // The daemon's check that it can reach the socket: connected, then closed.
        FileDescriptor.close(try Self.connect(socket))
        let daemon = try Self.connect(socket, sending: Self.callback(socket.token))
        defer { [wrong, other, silent, daemon].forEach { FileDescriptor.close($0) } }

        guard case .daemon(let accepted)? = await socket.nextCall(stranger: strangers.note) else {
            Issue.record("the daemon's call was not taken")
            return
        }
        defer { FileDescriptor.close(accepted) }
        // The accepted end is the daemon's connection: what it sends next arrives there.
        try UnixSocket.sendAll(daemon, Array("next\n".utf8))
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try buffer.withUnsafeMutableBytes { try UnixSocket.receive(accepted, into: $0) }
        #expect(count.map { Array(buffer[0..<$0]) } == Array("next\n".utf8))
        #expect(strangers.noted.count == 2, "\(strangers.noted)")
        #expect(strangers.noted.allSatisfy { $0.contains("did not give this agent's token") && $0.contains("pid \(getpid())") })
    }

    /// Given all the time in the world to prove itself, a stranger that
    /// says half a line and waits is still waited for when the daemon's
    /// call, which came after it, is taken.
    @Test func aStrangerThatSaysNothingDoesNotHoldUpTheDaemon() async throws {
        let socket = try CallbackSocket.open(proofWait: .seconds(3600))
        defer { socket.close() }
        let strangers = Strangers()
        let silent = try Self.connect(socket)
        try UnixSocket.sendAll(silent, Array(#"{"jsonrpc":"2.0","#.utf8))
        let daemon = try Self.connect(socket, sending: Self.callback(socket.token))
        defer { [silent, daemon].forEach { FileDescriptor.close($0) } }
        let call = await socket.nextCall(stranger: strangers.note)
        guard case .daemon(let accepted)? = call else {
            Issue.record("the daemon's call was not taken: \(String(describing: call))")
            return
        }
        FileDescriptor.close(accepted)
        #expect(strangers.noted.isEmpty, "the stranger was given up on before the daemon's call was taken: \(strangers.noted)")
    }

    @Test func aLineAfterTheCallbackIsNoDaemons() async throws {
        let socket = try CallbackSocket.open()
        defer { socket.close() }
        let strangers = Strangers()
        var lines = Self.callback(socket.token).line()
        lines += RPCMessage.request(id: .string("authkeyd-1"), method: Prompt.Kind.enterPin.method, params: nil).line()
        let eager = try Self.connect(socket)
        try UnixSocket.sendAll(eager, lines)
        let daemon = try Self.connect(socket, sending: Self.callback(socket.token))
        defer { [eager, daemon].forEach { FileDescriptor.close($0) } }
        guard case .daemon(let accepted)? = await socket.nextCall(stranger: strangers.note) else {
            Issue.record("the daemon's call was not taken")
            return
        }
        FileDescriptor.close(accepted)
        #expect(strangers.noted.count == 1, "\(strangers.noted)")
    }

    @Test func theReplacedNoticeWithTheTokenEndsTheWait() async throws {
        let socket = try CallbackSocket.open()
        defer { socket.close() }
        let forged = try Self.connect(socket, sending: .notification(method: Method.agentReplaced, params: ["pid": 1]))
        let told = try Self.connect(socket, sending: .notification(
            method: Method.agentReplaced, params: ["pid": 42, "token": .string(socket.token)]))
        defer { [forged, told].forEach { FileDescriptor.close($0) } }
        let call = await socket.nextCall(stranger: { _ in })
        guard case .replaced(let pid)? = call else {
            Issue.record("not replaced: \(String(describing: call))")
            return
        }
        #expect(pid == 42, "the notice without the token was taken")
    }

    @Test func closingEndsTheWait() async throws {
        let socket = try CallbackSocket.open()
        let waiting = Task { await socket.nextCall(stranger: { _ in }) }
        try await Task.sleep(for: .milliseconds(50))
        socket.close()
        #expect(await waiting.value == nil)
        // The name is free once the socket is gone.
        #expect(throws: SystemError.self) { _ = try UnixSocket.connect(abstractName: socket.name, nonBlocking: true) }
    }
}
