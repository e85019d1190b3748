import AuthProtocol
import Glibc

/// Session agents (authkeyd-protocol(7), "Agents"): at most one connection
/// per user answers the prompts of that user's requesters that cannot
/// answer them themselves. The newest registration wins; the one it
/// replaces is told, and keeps answering the prompts it already holds.
extension Broker {
    /// `agent.register`: this connection becomes the agent of its uid.
    func registerAgent(_ session: Session) -> JSONValue {
        let uid = session.peer.uid
        if let previous = agents[uid], previous !== session {
            previous.send(.notification(method: Method.agentReplaced, params: encode(AgentReplaced(pid: Int(session.peer.pid)))))
            logger.info("agent for uid \(uid) replaced: pid \(previous.peer.pid) by pid \(session.peer.pid)")
        } else if agents[uid] == nil {
            logger.info("agent for uid \(uid) registered: pid \(session.peer.pid)")
        }
        agents[uid] = session
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
        guard agents[session.peer.uid] === session else { return }
        agents[session.peer.uid] = nil
        logger.info("agent for uid \(session.peer.uid) (pid \(session.peer.pid)) left")
    }

    /// The agent that answers for `operation`'s user, unless the requester
    /// is that agent itself.
    func agent(for operation: Operation) -> Session? {
        guard let agent = agents[operation.owner], agent !== operation.session else { return nil }
        return agent
    }
}
