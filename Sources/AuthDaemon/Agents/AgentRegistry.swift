import AuthProtocol
import Glibc

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
    /// `agent.register`: this connection becomes the agent of its uid.
    func registerAgent(_ session: Session) -> JSONValue {
        let uid = session.peer.uid
        let previous = agents.register(session)
        if let previous, previous !== session {
            previous.send(.notification(method: Method.agentReplaced, params: encode(AgentReplaced(pid: Int(session.peer.pid)))))
            logger.info("agent for uid \(uid) replaced: pid \(previous.peer.pid) by pid \(session.peer.pid)")
        } else if previous == nil {
            logger.info("agent for uid \(uid) registered: pid \(session.peer.pid)")
        }
        return encode(AgentRegistration(registered: true, uid: Int(uid)))
    }

    /// `agent.unregister`: this connection stops being its uid's agent (if
    /// it still was); the prompts it holds stay its own to answer.
    func unregisterAgent(_ session: Session) -> JSONValue {
        agentLeft(session)
        return encode(AgentRegistration(registered: false, uid: Int(session.peer.uid)))
    }

    /// The connection is no longer its user's agent: unregistered, or gone.
    func agentLeft(_ session: Session) {
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
