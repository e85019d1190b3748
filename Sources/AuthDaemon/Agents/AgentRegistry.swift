import AuthProtocol
import Glibc
import SystemKit

/// Session agents (authkeyd-protocol(7), "Agents"): at most one connection
/// per user answers the prompts of that user's requesters that cannot
/// answer them themselves. The newest registration wins; the one it
/// replaces is told, and keeps answering the prompts it already holds.
/// Broker-confined (a value the actor holds).
struct AgentRegistry {
    private var byUser: [uid_t: Session] = [:]
    private var nextToken = 1

    func agent(ofUser uid: uid_t) -> Session? { byUser[uid] }

    /// `session` becomes its user's agent; the one it replaces, if any.
    mutating func register(_ session: Session) -> Session? {
        byUser.updateValue(session, forKey: session.peer.uid)
    }

    /// `session` is no longer its user's agent; false when it was not.
    mutating func remove(_ session: Session) -> Bool {
        guard byUser[session.peer.uid] === session else { return false }
        byUser[session.peer.uid] = nil
        return true
    }

    /// The name agents are shown for the next request they see: `op-N`,
    /// unique across requesters.
    mutating func nextRequestName() -> String {
        defer { nextToken += 1 }
        return "op-\(nextToken)"
    }
}

extension Broker {
    /// `agent.register`: this connection becomes the agent of its uid;
    /// with a callback, one the daemon may exit without and call back.
    /// A call back under way for the uid is over: its requests go on.
    func registerAgent(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let callback = try requestedCallback(params)
        let uid = session.peer.uid
        let previous = agents.register(session)
        if let previous, previous !== session {
            previous.send(.notification(method: Method.agentReplaced, params: encode(AgentReplaced(pid: Int(session.peer.pid)))))
            logger.info("agent for uid \(uid) replaced: pid \(previous.peer.pid) by pid \(session.peer.pid)")
        } else if previous == nil {
            logger.info("agent for uid \(uid) registered: pid \(session.peer.pid)")
        }
        let refusal = keepCallback(callback, of: session, replacingConnected: previous)
        endWake(ofUser: uid)
        armIdleTimer()
        return encode(AgentRegistration(
            registered: true, uid: Int(uid), callback: callback.map { _ in refusal == nil }, callbackError: refusal))
    }

    /// `agent.unregister`: this connection stops being its uid's agent (if
    /// it still was), and its callback is forgotten; the prompts it holds
    /// stay its own to answer.
    func unregisterAgent(_ session: Session) -> JSONValue {
        if session.callsBack && agents.agent(ofUser: session.peer.uid) === session {
            callbacks?.set(nil, forUser: session.peer.uid)
        }
        agentLeft(session)
        return encode(AgentRegistration(registered: false, uid: Int(session.peer.uid)))
    }

    /// The connection is no longer its user's agent: unregistered, or gone.
    /// Gone, its callback stays: the agent is called back when needed.
    func agentLeft(_ session: Session) {
        session.callsBack = false
        guard agents.remove(session) else { return }
        logger.info("agent for uid \(session.peer.uid) (pid \(session.peer.pid)) left")
    }
}

extension Operation {
    /// The agent that answers for the operation's user, unless the
    /// requester is that agent itself.
    func agent(in broker: isolated Broker) -> Session? {
        guard let agent = broker.agents.agent(ofUser: owner), agent !== session else { return nil }
        return agent
    }
}

extension Broker {
    /// `agent.register`'s callback, checked: both members or neither.
    func requestedCallback(_ params: JSONValue?) throws(RPCError) -> RegisteredCallback? {
        let request = try decode(AgentRegisterParams.self, params)
        switch (request.callback, request.token) {
        case (nil, nil):
            return nil
        case (let name?, let token?):
            if let problem = AgentCallback.problem(withName: name) { throw RPCError(.invalidParams, "invalid params: callback: \(problem)") }
            if let problem = AgentCallback.problem(withToken: token) { throw RPCError(.invalidParams, "invalid params: token: \(problem)") }
            return RegisteredCallback(name: name, token: token)
        case (nil, _?):
            throw RPCError(.invalidParams, "invalid params: token without callback: give both, or neither")
        case (_?, nil):
            throw RPCError(.invalidParams, "invalid params: callback without token: give both, or neither")
        }
    }

    /// Makes `callback` `session`'s user's, once the daemon has reached it
    /// there (a socket of that user's, in a network namespace the daemon
    /// sees), or forgets theirs when there is none: the newest
    /// registration's is the one. An agent that was not connected and is
    /// replaced hears it at its old callback. Returns why the callback is
    /// not kept, or nil.
    private func keepCallback(_ callback: RegisteredCallback?, of session: Session, replacingConnected connected: Session?) -> String? {
        let uid = session.peer.uid
        let stored = callbacks?.callback(ofUser: uid)
        var refusal: String?
        var kept: RegisteredCallback?
        if let callback {
            if callbacks == nil {
                refusal = "authkeyd has no state directory to keep it in (see its log), so it stays running while this agent is connected"
            } else if callback != stored, let problem = probe(callback, ofUser: uid) {
                refusal = "authkeyd cannot call this agent back: \(problem); it stays running while the agent is connected"
            } else {
                kept = callback
            }
            if let refusal { logger.warning("the callback of uid \(uid)'s agent (pid \(session.peer.pid)) is not kept: \(refusal)") }
        }
        session.callsBack = kept != nil
        if let stored, stored != kept, connected == nil { tellReplaced(stored, ofUser: uid, by: session.peer.pid) }
        callbacks?.set(kept, forUser: uid)
        return refusal
    }

    /// Whether the daemon can call `uid` back at `callback`: why not, or nil.
    private func probe(_ callback: RegisteredCallback, ofUser uid: uid_t) -> String? {
        let reached = reach(callback, ofUser: uid)
        if case .reached(let fd) = reached { FileDescriptor.close(fd) }
        return reached.problem(callback)
    }
}
