import AuthProtocol
import Crypto
import Dispatch
import Glibc
import SystemKit

/// One connected client, as the broker sees it: who it is, what it may do,
/// and the requests open in both directions.
///
/// Touched only on the broker's executor (it is the broker's state, kept
/// per client); `@unchecked Sendable` lets the queue-bound callbacks that
/// enter the broker synchronously carry it.
final class Session: @unchecked Sendable {
    let id: Int
    let connection: ClientConnection
    let peer: PeerIdentity
    let rights: Rights
    /// Receives `authenticators.added/removed/changed`.
    var watching = false
    /// The client's requests still being worked on, by their id.
    var inFlight: [RPCID: InFlightRequest] = [:]
    /// The daemon's requests to the client (prompts) and their replies.
    let prompts: PromptChannel
    /// The client shut down its writing side: finish, then close.
    var inputEnded = false
    var clientName: String?
    /// The client is its user's agent, and the daemon keeps its callback:
    /// idle, its connection does not keep the daemon running (`isIdle`).
    var callsBack = false
    /// The prompts the client answers (`hello`'s `ui`): all until it says
    /// otherwise. `Operation.answerer` reads it.
    var answeredPrompts = Set(Prompt.Kind.allCases)

    /// Whether the client leaves some prompts to its user's agent: it
    /// declared a `ui` list without them. Its statuses go to the agent too.
    var leavesPromptsToAgent: Bool { answeredPrompts.count < Prompt.Kind.allCases.count }

    /// Who this client is, for its user's agent; read from the kernel the
    /// first time an agent needs it (the client is alive then: it waits
    /// for its request), and kept.
    lazy var requester = Requester(
        pid: Int(peer.pid), uid: Int(peer.uid), command: Self.command(of: peer.pid), client: clientName)

    private static func command(of pid: pid_t) -> String {
        ProcFiles.command(pid: pid) ?? "pid \(pid)"
    }

    /// `queue` is the broker's, which the session is confined to.
    init(id: Int, connection: ClientConnection, queue: DispatchQueue, peer: PeerIdentity, rights: Rights) {
        self.id = id
        self.connection = connection
        self.peer = peer
        self.rights = rights
        prompts = PromptChannel(queue: queue) { [connection] message in Self.send(message, over: connection) }
    }

    func send(_ message: RPCMessage) { Self.send(message, over: connection) }

    /// The line is zeroed once queued: replies can carry secrets
    /// (hmac-secret outputs).
    private static func send(_ message: RPCMessage, over connection: ClientConnection) {
        var line = message.line()
        connection.send(line)
        zeroSecret(&line)
    }

    func send(line: [UInt8]) {
        connection.send(line)
    }
}

/// A client request that takes time: its task, and how to stop it.
/// Broker-confined, like `Session`.
final class InFlightRequest: @unchecked Sendable {
    let method: String
    var task: Task<Void, Never>?
    /// Runs when the request is cancelled (by the client, its death, a
    /// timeout or shutdown), to stop the key: `fido_dev_cancel`.
    var onCancel: [() -> Void] = []
    private(set) var cancellation: RPCError?

    /// What agents were shown of the request, if any (`AgentView`).
    var agentView: AgentView?
    /// When the request is cancelled with `timeout`, and the limit that
    /// set it (`Broker.limitTime`).
    var timeLimit: (deadline: DispatchTime, duration: Duration)?
    /// The last `operation.status` the requester was sent for it, and when
    /// (`StatusRepeat`).
    var lastStatus: OperationStatus?
    var lastStatusSent = DispatchTime.now()

    init(method: String) { self.method = method }

    /// When the request's time is up (never, before `Broker.limitTime`).
    var deadline: DispatchTime { timeLimit?.deadline ?? .distantFuture }

    var isCancelled: Bool { cancellation != nil }

    /// Cancels with `timeout` if the time limit has passed; whether it has.
    /// The broker's timer calls it, and so does a key call that libfido2
    /// ended with its own timeout (set to the time the operation has left,
    /// so at or after this limit) before the timer's turn came.
    @discardableResult
    func expireIfPastTimeLimit(now: DispatchTime = .now()) -> Bool {
        guard let limit = timeLimit, limit.deadline <= now else { return false }
        cancel(RPCError(.timeout, "\(method) did not finish within \(limit.duration)"))
        return true
    }

    /// Cancels once; the first reason stands.
    func cancel(_ reason: RPCError) {
        guard cancellation == nil else { return }
        cancellation = reason
        task?.cancel()
        let hooks = onCancel
        onCancel = []
        hooks.forEach { $0() }
    }
}
