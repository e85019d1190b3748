import AuthProtocol
import Dispatch
import Glibc
import SystemKit

/// What came of connecting to an agent's callback.
enum CallbackReach {
    /// Connected, to a socket the registered user listens on.
    case reached(Int32)
    /// Nothing listens there: the agent ended.
    case gone
    /// Another user's socket has the name.
    case wrongUser(uid_t)
    /// Its backlog is full, or the call failed.
    case unreachable(String)

    /// Why an agent cannot be called back there, or nil when it can.
    func problem(_ callback: RegisteredCallback) -> String? {
        switch self {
        case .reached: return nil
        case .gone: return "nothing listens at @\(callback.name)"
        case .wrongUser(let owner): return "@\(callback.name) is a socket of uid \(owner)'s"
        case .unreachable(let why): return why
        }
    }
}

/// The calls back under way: a connection made to a user's agent, and the
/// requests waiting for it to register on it. Broker-confined.
struct AgentWakes {
    fileprivate var byUser: [uid_t: AgentWake] = [:]

    var isEmpty: Bool { byUser.isEmpty }
}

/// One call back, until the agent registers, its connection ends, or the
/// time is up; then every request waiting on it goes on. Broker-confined.
final class AgentWake: @unchecked Sendable {
    let session: Session
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var ended = false

    init(session: Session) { self.session = session }

    func wait(_ continuation: CheckedContinuation<Void, Never>) {
        if ended { return continuation.resume() }
        waiters.append(continuation)
    }

    fileprivate func end() {
        ended = true
        let waiting = waiters
        waiters = []
        waiting.forEach { $0.resume() }
    }
}

extension Broker {
    /// How long a request waits for an agent called back to register: a
    /// live agent takes milliseconds; one stopped or stuck costs at most this.
    static let agentCallbackWait: Duration = .seconds(2)

    func wakeAgent(ofUser uid: uid_t) async {
        guard !isShuttingDown, agents.agent(ofUser: uid) == nil else { return }
        let wake: AgentWake
        if let underWay = wakes.byUser[uid] {
            wake = underWay
        } else {
            guard let callback = callbacks?.callback(ofUser: uid), let started = callBack(callback, ofUser: uid) else { return }
            wakes.byUser[uid] = started
            wake = started
        }
        await withCheckedContinuation { wake.wait($0) }
    }

    /// Connects to `uid`'s agent and says `agent.callback` with its token;
    /// nil when it cannot be reached (forgotten when it is gone or the
    /// name is another user's).
    private func callBack(_ callback: RegisteredCallback, ofUser uid: uid_t) -> AgentWake? {
        switch reach(callback, ofUser: uid) {
        case .reached(let fd):
            // The agent's connection is a client's like any other: the
            // same checks, limits and rights.
            guard let session = accept(fd), !session.connection.isClosed else { return nil }
            session.send(.notification(method: Method.agentCallback, params: encode(AgentCallbackNotice(token: callback.token))))
            let wake = AgentWake(session: session)
            queue.asyncAfter(deadline: .now() + .milliseconds(Self.agentCallbackWait.wholeMilliseconds)) { [weak self, weak wake] in
                self?.assumeIsolated { broker in
                    if let wake { broker.callbackTimedOut(wake, ofUser: uid) }
                }
            }
            logger.info("calling back the agent of uid \(uid) (pid \(session.peer.pid)) at @\(callback.name)")
            return wake
        case .gone:
            logger.info("the agent of uid \(uid) is gone (nothing listens at @\(callback.name)); forgotten")
            callbacks?.set(nil, forUser: uid)
        case .wrongUser(let owner):
            logger.warning("the callback of uid \(uid)'s agent, @\(callback.name), is a socket of uid \(owner)'s: forgotten, not called")
            callbacks?.set(nil, forUser: uid)
        case .unreachable(let why):
            logger.warning("cannot call back the agent of uid \(uid): \(why)")
        }
        return nil
    }

    private func callbackTimedOut(_ wake: AgentWake, ofUser uid: uid_t) {
        guard wakes.byUser[uid] === wake else { return }
        logger.warning("the agent of uid \(uid) (pid \(wake.session.peer.pid)) did not register within \(Self.agentCallbackWait) of its call back; going on without it")
        endWake(ofUser: uid)
        wake.session.connection.close()
    }

    /// The call back to `uid`'s agent is over: an agent registered, the
    /// connection ended, or the time was up. The requests waiting go on.
    func endWake(ofUser uid: uid_t) {
        guard let wake = wakes.byUser.removeValue(forKey: uid) else { return }
        wake.end()
        armIdleTimer()
    }

    /// A connection ended: if it was a call back, nobody will register on it.
    func wakeSessionEnded(_ session: Session) {
        if wakes.byUser[session.peer.uid]?.session === session { endWake(ofUser: session.peer.uid) }
    }

    /// Shutdown: no agent is waited for any more.
    func endWakes() {
        for uid in Array(wakes.byUser.keys) { endWake(ofUser: uid) }
    }

    /// Connects to `callback` without waiting, which cannot block the
    /// broker's queue (a Unix socket connects at once or not at all), and
    /// checks that the socket is `uid`'s: `SO_PEERCRED` on a connected
    /// socket names who bound and listens at the other end.
    func reach(_ callback: RegisteredCallback, ofUser uid: uid_t) -> CallbackReach {
        let fd: Int32
        do { fd = try UnixSocket.connect(abstractName: callback.name, nonBlocking: true) } catch {
            switch error.code {
            case ECONNREFUSED: return .gone
            case EAGAIN: return .unreachable("@\(callback.name) has too many connections waiting (its agent does not accept them)")
            default: return .unreachable("@\(callback.name): \(error)")
            }
        }
        let owner: uid_t
        do { owner = try PeerCredentials(socket: fd).uid } catch {
            FileDescriptor.close(fd)
            return .unreachable("@\(callback.name): \(error)")
        }
        guard owner == uid else {
            FileDescriptor.close(fd)
            return .wrongUser(owner)
        }
        return .reached(fd)
    }

    /// Tells an agent that is not connected, at its callback, that a newer
    /// agent took its place (a connected one hears it on its connection):
    /// it would otherwise wait to be called for good. The line is all the
    /// agent hears; the connection closes.
    func tellReplaced(_ callback: RegisteredCallback, ofUser uid: uid_t, by pid: pid_t) {
        guard case .reached(let fd) = reach(callback, ofUser: uid) else { return }
        defer { FileDescriptor.close(fd) }
        var line = RPCMessage.notification(method: Method.agentReplaced, params: encode(AgentReplaced(pid: Int(pid), token: callback.token))).line()
        defer { zeroSecret(&line) }
        // A new connection's buffer takes the line whole, or nothing is told.
        let sent = line.withUnsafeBytes { bytes in
            Result { () throws(SystemError) in try UnixSocket.send(fd, bytes, nonBlocking: true) }
        }
        if case .success(line.count?) = sent {
            logger.info("told the agent of uid \(uid) at @\(callback.name) that pid \(pid) replaced it")
        } else {
            logger.info("could not tell the agent of uid \(uid) at @\(callback.name) that it was replaced; it waits unasked")
        }
    }
}

extension Operation {
    /// Before an operation whose requester leaves prompts to its user's
    /// agent: when no agent of that user is connected but one left a
    /// callback, the daemon calls it back and waits for it to register
    /// (`Broker.agentCallbackWait` at most), so that it is there for the
    /// operation's statuses as well as its prompts. One call serves every
    /// request that waits meanwhile. Without an agent, nothing to do.
    func wakeAgent(in broker: isolated Broker) async {
        guard session.leavesPromptsToAgent else { return }
        await broker.wakeAgent(ofUser: owner)
    }
}
