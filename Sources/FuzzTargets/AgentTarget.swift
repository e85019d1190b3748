import AuthClient
import AuthProtocol
import AuthctlKit
import Dispatch
import Glibc
import SystemKit

/// The `agent` target: bytes from the daemon into `authctl agent`, as the
/// installed program runs it (`Authctl.run(["agent"])`, its terminal front
/// end asking at /dev/null, where every question reads as Ctrl-D): the
/// harness plays the daemon on a socketpair, answers `hello` and
/// `agent.register`, then sends the input — prompts with
/// `operation.requester`, `operation.status`, `operation.cancelled`,
/// `operation.finished`, `agent.replaced`, whatever the bytes are — and
/// hangs up.
///
/// Nothing may crash or hang, and these must hold:
/// - every prompt (request) the input holds is answered once, with its id,
///   by a reply the daemon reads (`PromptReply`) or an error, and every
///   line that is no message but has an id with an error, unless the agent
///   ended first (replaced by another);
/// - once the daemon hangs up, the agent ends, with exit status 69 (or 0,
///   replaced); before that only when the input holds a line that is no
///   JSON-RPC message and has no id to answer, on which AuthClient closes
///   the connection as a broken peer's (69).
public func fuzzAgent(_ data: [UInt8]) {
    var pair: [Int32] = [-1, -1]
    require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0, "socketpair failed")
    let daemon = pair[1], agentSide = pair[0]
    defer { FileDescriptor.close(daemon) }
    let run = AgentRun(connectedTo: agentSide)

    var replies = ReplyReader(daemon)
    serveHandshake(on: daemon, &replies)
    let prompts = promptIDs(in: data)
    FuzzTrace.log("sending \(data.count) bytes, \(prompts.values.reduce(0, +)) prompts")
    try? UnixSocket.sendAll(daemon, data)

    // Every prompt answered, unless the agent ended first.
    var answered: [RPCID: Int] = [:]
    let deadline = ContinuousClock.now + .seconds(15)
    while answered != prompts, run.status == nil {
        require(ContinuousClock.now < deadline, "prompts left unanswered: \(prompts) asked, \(answered) answered")
        guard let line = replies.next(waitingMilliseconds: 10), let id = checkReply(line) else { continue }
        answered[id, default: 0] += 1
        require(answered[id]! <= prompts[id] ?? 0, "\(id) answered more often than asked")
    }
    if let early = run.status {
        require(early == 0 || (early == 69 && holdsUnanswerableLine(data)), "the agent ended with \(early) before the daemon hung up")
    }

    _ = shutdown(daemon, Int32(SHUT_WR))
    let status = run.wait(seconds: 15)
    require(status != nil, "the agent did not end after the daemon hung up")
    require(status == 69 || status == 0, "the agent ended with \(status ?? -1) after the daemon hung up")
}

/// `authctl agent` running, its exit status once it ends.
private final class AgentRun: Sendable {
    private let ended = DispatchSemaphore(value: 0)
    private let result = Protected<Int32?>(nil)

    init(connectedTo fd: Int32) {
        let handed = Protected<Int32?>(fd)
        let console = Console(
            output: Discarded(), environment: [:], terminalPath: "/dev/null",
            connect: { path throws(AuthClientError) in
                guard let fd = handed.withLock({ fd in defer { fd = nil }; return fd }) else {
                    throw .cannotConnect(path: path, SystemError("connect", code: ECONNREFUSED))
                }
                return fd
            },
            sessionQueue: agentQueue, ownsProcess: false)
        Task { [ended, result] in
            let status = await Authctl.run(["agent"], console: console)
            result.withLock { $0 = status }
            ended.signal()
        }
    }

    var status: Int32? { result.withLock { $0 } }

    func wait(seconds: Int) -> Int32? {
        guard ended.wait(timeout: .now() + .seconds(seconds)) == .success else { return nil }
        ended.signal()
        return status
    }
}

/// The agent's session: one queue for every input, as the program has one main queue.
private let agentQueue = DispatchQueue(label: "fuzz-agent")

/// What the agent writes to standard error (its end), not kept.
private struct Discarded: ConsoleOutput {
    func write(_ text: String) {}
    func writeError(_ text: String) {}
    func flush() {}
}

/// The daemon's side of `hello` and `agent.register`, as authkeyd answers them.
private func serveHandshake(on daemon: Int32, _ replies: inout ReplyReader) {
    let answers: [(method: String, result: JSONValue)] = [
        (Method.hello, encoded(HelloResult(protocol: protocolVersion, daemon: "authkeyd/fuzz", capabilities: Method.clientMethods, uid: 1000, canManage: false))),
        (Method.registerAgent, encoded(AgentRegistration(registered: true, uid: 1000))),
    ]
    for answer in answers {
        guard let line = replies.next(waitingMilliseconds: 15_000) else { return require(false, "the agent did not call \(answer.method)") }
        guard case .request(let id, answer.method, _)? = parsed(line) else {
            return require(false, "the agent sent \(String(decoding: line, as: UTF8.self)), not \(answer.method)")
        }
        try? UnixSocket.sendAll(daemon, RPCMessage.response(id: id, result: answer.result).line())
    }
}

/// The ids of the requests (prompts) in `data`, as many times as each comes,
/// read as the agent's client reads the daemon's lines.
private func promptIDs(in data: [UInt8]) -> [RPCID: Int] {
    var framer = LineFramer(maxLineLength: 64 << 20)
    var ids: [RPCID: Int] = [:]
    var broken = false
    framer.feed(data) { event in
        guard !broken else { return }
        switch event {
        case .line(let line):
            // A request is answered with a reply; a line that is no
            // message but names an id, with the error (JSON-RPC's answer to
            // an invalid request).
            do throws(MalformedMessage) {
                if case .request(let id, _, _) = try RPCMessage.parse(line) { ids[id, default: 0] += 1 }
            } catch {
                if let id = error.id { ids[id, default: 0] += 1 }
            }
        case .lineTooLong:
            broken = true
        }
    }
    return ids
}

/// One of the agent's lines after the handshake: the answer to a prompt, a
/// `PromptReply` or an error with the prompt's id. Returns the id.
private func checkReply(_ line: [UInt8]) -> RPCID? {
    switch parsed(line) {
    case .response(let id, let result)?:
        require((try? JSONValueDecoder().decode(PromptReply.self, from: result)) != nil, "a reply the daemon cannot read: \(result.jsonText)")
        return id
    case .errorResponse(let id?, _)?:
        return id
    default:
        require(false, "the agent sent \(String(decoding: line, as: UTF8.self)), which answers no prompt")
        return nil
    }
}

private func parsed(_ line: [UInt8]) -> RPCMessage? {
    try? line.withUnsafeBufferPointer { buffer throws(MalformedMessage) in try RPCMessage.parse(buffer) }
}

private func encoded(_ value: some Encodable) -> JSONValue {
    (try? JSONValueEncoder().encode(value)) ?? .null
}

/// The agent's lines, as the daemon reads them.
private struct ReplyReader {
    let fd: Int32
    var framer = LineFramer(maxLineLength: 1 << 20)
    var lines: [[UInt8]] = []

    init(_ fd: Int32) { self.fd = fd }

    /// The next line, waiting up to `waitingMilliseconds` for it; nil if
    /// none came, or the agent hung up.
    mutating func next(waitingMilliseconds: Int) -> [UInt8]? {
        let deadline = ContinuousClock.now + .milliseconds(waitingMilliseconds)
        while lines.isEmpty {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard (try? waitForEvents(&descriptors, timeoutMilliseconds: max(1, left.wholeMilliseconds))) ?? 0 > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            guard let count = try? buffer.withUnsafeMutableBytes({ try FileDescriptor.read(fd, into: $0) }), count > 0 else { return nil }
            framer.feed(Array(buffer[0..<count])) { event in
                if case .line(let line) = event { lines.append(Array(line)) }
            }
        }
        return lines.removeFirst()
    }
}

/// Whether a line of the input is no JSON-RPC message and carries no id
/// to answer it by: AuthClient closes the connection on such a line.
private func holdsUnanswerableLine(_ data: [UInt8]) -> Bool {
    data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).contains { line in
        [UInt8](line).withUnsafeBufferPointer { buffer in
            do throws(MalformedMessage) {
                _ = try RPCMessage.parse(buffer)
                return false
            } catch {
                return error.id == nil
            }
        }
    }
}
