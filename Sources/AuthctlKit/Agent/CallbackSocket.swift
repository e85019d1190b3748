import AuthProtocol
import Glibc
import SystemKit

/// Where `authctl agent` waits to be called back (authkeyd-protocol(7),
/// "Agents"): an abstract Unix socket, `@authkeyd-agent.UID.RANDOM`, and
/// a token of 32 random bytes, both registered with `agent.register`.
/// With them the daemon need not be kept running by the agent's
/// connection: it exits when idle, and when a prompt needs the agent it
/// connects here and says `agent.callback` with the token, as polkit's
/// authority calls its agents.
///
/// Anyone may connect to an abstract socket, and a connection that could
/// pass for the daemon's could ask the user for a PIN. So a connection is
/// the daemon's only when its first line, within two seconds, is
/// `agent.callback` (or `agent.replaced`) with the token; any other is
/// closed, unread beyond that line. Several are read at once, so that
/// none can hold up the daemon's.
final class CallbackSocket: Sendable {
    /// What the daemon said when it called.
    enum Call: Sendable, Equatable {
        /// It needs the agent: the connection, to say `hello` and
        /// `agent.register` on, as on the agent's own.
        case daemon(Int32)
        /// A newer agent took this one's place while it waited.
        case replaced(pid: Int)
    }

    let name: String
    let token: String
    /// How long a connection has to prove it is the daemon's.
    let proofWait: Duration
    private let listener: Int32
    private let closed = Protected(false)
    /// Connections read at once; the oldest beyond them is dropped.
    static let maxUnproven = 16
    /// The longest first line: `agent.callback` with a token is far shorter.
    static let maxLine = 1024

    private init(name: String, token: String, proofWait: Duration, listener: Int32) {
        self.name = name
        self.token = token
        self.proofWait = proofWait
        self.listener = listener
    }

    deinit { FileDescriptor.close(listener) }

    /// A socket of a fresh name, with a fresh token.
    static func open(proofWait: Duration = .seconds(2)) throws(SystemError) -> CallbackSocket {
        let token = AgentCallback.token(from: try kernelRandomBytes(AgentCallback.tokenLength / 2))
        while true {
            let name = "\(AgentCallback.namePrefix)\(getuid()).\(AgentCallback.token(from: try kernelRandomBytes(8)))"
            let listener: Int32
            do { listener = try UnixSocket.listen(abstractName: name) } catch where error.code == EADDRINUSE {
                // Another socket drew the same name: draw again.
                continue
            }
            let socket = CallbackSocket(name: name, token: token, proofWait: proofWait, listener: listener)
            // Accepted until none waits, without blocking.
            try setNonBlocking(listener)
            return socket

        }
    }

    /// What `agent.register` is given.
    var registration: AgentRegisterParams { AgentRegisterParams(callback: name, token: token) }

    /// Waits, on a thread of its own, for the daemon to call; nil once
    /// `close` is called. `stranger` hears of each connection that said
    /// something other than the token (an empty one is the daemon's check
    /// that it can reach the socket, and is not told).
    func nextCall(stranger: @escaping @Sendable (String) -> Void) async -> Call? {
        await withTaskCancellationHandler {
            await runOnOwnThread { [self] in waitForCall(stranger: stranger) }
        } onCancel: {
            close()
        }
    }

    /// Ends the wait: the listener is shut down, which wakes its poll.
    func close() {
        closed.withLock { $0 = true }
        try? UnixSocket.shutdown(listener)
    }

    // MARK: - The wait

    /// A connection yet to prove it is the daemon's.
    private struct Unproven {
        let fd: Int32
        let peer: String
        let deadline: ContinuousClock.Instant
        var line: [UInt8] = []
    }

    private func waitForCall(stranger: @Sendable (String) -> Void) -> Call? {
        var unproven: [Unproven] = []
        // Whatever is not the daemon's call is closed, however the wait ends.
        defer { unproven.forEach { FileDescriptor.close($0.fd) } }
        while !isClosed {
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
                + unproven.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let timeout = unproven.map(\.deadline).min().map { max(0, ($0 - .now).wholeMilliseconds) + 1 } ?? -1
            guard (try? waitForEvents(&descriptors, timeoutMilliseconds: timeout)) != nil, !isClosed else { return nil }
            let readable = Set(descriptors.dropFirst().filter { $0.revents != 0 }.map(\.fd))
            var waiting: [Unproven] = []
            while !unproven.isEmpty {
                var connection = unproven.removeFirst()
                switch verdict(on: &connection, readable: readable.contains(connection.fd)) {
                case .waiting:
                    waiting.append(connection)
                case .call(let call):
                    unproven = waiting + unproven
                    if case .replaced = call { FileDescriptor.close(connection.fd) }
                    return call
                case .refused(let why):
                    FileDescriptor.close(connection.fd)
                    if let why { stranger("a connection to this agent's callback from \(connection.peer) \(why); closed") }
                }
            }
            unproven = waiting
            if descriptors[0].revents & Int16(POLLIN) != 0 { acceptWaiting(into: &unproven) }
        }
        return nil
    }

    private var isClosed: Bool { closed.withLock { $0 } }

    private func acceptWaiting(into unproven: inout [Unproven]) {
        while let fd = try? UnixSocket.accept(listener, nonBlocking: true) {
            let peer = (try? PeerCredentials(socket: fd)).map { "pid \($0.pid) (uid \($0.uid))" } ?? "an unknown process"
            unproven.append(Unproven(fd: fd, peer: peer, deadline: .now + proofWait))
            if unproven.count > Self.maxUnproven { FileDescriptor.close(unproven.removeFirst().fd) }
        }
    }

    private enum Verdict {
        case waiting
        case call(Call)
        /// Not the daemon's call; why, when it is worth saying.
        case refused(String?)
    }

    /// What `connection` has shown so far, reading what it sent if it is
    /// `readable`.
    private func verdict(on connection: inout Unproven, readable: Bool) -> Verdict {
        if readable && !receive(into: &connection) {
            // The daemon's check that it can reach the socket says nothing.
            return .refused(connection.line.isEmpty ? nil : "hung up within its first line")
        }
        if let end = connection.line.firstIndex(of: 0x0A) {
            let trailing = end + 1 < connection.line.count
            return call(in: Array(connection.line[..<end]), trailing: trailing, on: connection.fd).map(Verdict.call)
                ?? .refused("did not give this agent's token")
        }
        if connection.line.count > Self.maxLine { return .refused("sent a line too long to be the daemon's") }
        if connection.deadline <= .now { return .refused("gave no token within \(proofWait)") }
        return .waiting
    }

    /// Reads what the connection has sent, without waiting; false when it
    /// ended.
    private func receive(into connection: inout Unproven) -> Bool {
        var chunk = [UInt8](repeating: 0, count: Self.maxLine)
        let outcome = chunk.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try UnixSocket.receive(connection.fd, into: raw, nonBlocking: true) }
        }
        switch outcome {
        case .success(nil): return true
        case .success(0?), .failure: return false
        case .success(let count?):
            connection.line += chunk[0..<count]
            return true
        }
    }

    /// The daemon's call, if `line` is one with this agent's token. After
    /// `agent.callback` the daemon waits for the agent's `hello`: anything
    /// more (`trailing`) is no daemon's.
    private func call(in line: [UInt8], trailing: Bool, on fd: Int32) -> Call? {
        let message = try? line.withUnsafeBufferPointer { (buffer) throws(MalformedMessage) in try RPCMessage.parse(buffer) }
        guard case .notification(let method, let params)? = message else { return nil }
        let decoder = JSONValueDecoder()
        switch method {
        case Method.agentCallback:
            guard !trailing, let notice = try? decoder.decode(AgentCallbackNotice.self, from: params ?? .null),
                AgentCallback.tokensMatch(notice.token, token), (try? setNonBlocking(fd, false)) != nil
            else { return nil }
            return .daemon(fd)
        case Method.agentReplaced:
            guard let notice = try? decoder.decode(AgentReplaced.self, from: params ?? .null), let given = notice.token,
                AgentCallback.tokensMatch(given, token)
            else { return nil }
            return .replaced(pid: notice.pid)
        default:
            return nil
        }
    }
}
