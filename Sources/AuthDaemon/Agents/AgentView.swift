import AuthProtocol

/// What the agents were shown of one request: the name they know it by
/// (`op-N`, unique across requesters, since two requesters' ids can be
/// equal), and which agents must hear how it ends. Kept on the request,
/// which is broker-confined.
final class AgentView: @unchecked Sendable {
    let token: JSONValue
    /// The agents told about the request, by session id; emptied once
    /// they are told it ended, so that they are told once.
    private(set) var agents: [Int: Session] = [:]

    init(token: JSONValue) { self.token = token }

    /// Records that `agent` was shown the request; true the first time.
    func show(to agent: Session) -> Bool {
        agents.updateValue(agent, forKey: agent.id) == nil
    }

    /// Tells every agent shown the request that it ended, once.
    func end(_ method: String, _ params: some Encodable) {
        let told = agents.values
        agents = [:]
        guard !told.isEmpty else { return }
        let line = RPCMessage.notification(method: method, params: encode(params)).line()
        for agent in told { agent.send(line: line) }
    }
}

extension Operation {
    /// The view agents have of the operation's request, made when the
    /// first agent is shown it. It tells them `operation.cancelled` when
    /// the request is cancelled (the requester died or gave up, a timeout,
    /// shutdown); the broker tells them `operation.finished` otherwise
    /// (`tellAgentsFinished`).
    func agentView(in broker: isolated Broker) -> AgentView {
        if let view = request.agentView { return view }
        let view = AgentView(token: .string(broker.agents.nextRequestName()))
        request.agentView = view
        request.onCancel.append { [weak request = self.request] in
            let reason = request?.cancellation ?? RPCError(.cancelled, "cancelled")
            view.end(Method.operationCancelled, OperationCancelled(request: view.token, reason: reason.reason ?? .cancelled, message: reason.message))
        }
        return view
    }

    /// The operation as its agent sees it: its name for the request, and
    /// who asked.
    func info(shownIn view: AgentView) -> OperationInfo {
        var shown = info
        shown.request = view.token
        shown.requester = session.requester
        return shown
    }
}

extension Broker {
    /// Tells the agents shown a request that ended without being cancelled
    /// how it ended (a cancelled one told them already).
    func tellAgentsFinished(_ request: InFlightRequest, _ outcome: Result<JSONValue, RPCError>) {
        guard let view = request.agentView, request.cancellation == nil else { return }
        switch outcome {
        case .success:
            view.end(Method.operationFinished, OperationFinished(request: view.token, succeeded: true))
        case .failure(let error):
            view.end(Method.operationFinished, OperationFinished(request: view.token, succeeded: false, reason: error.reason, message: error.message))
        }
    }
}
