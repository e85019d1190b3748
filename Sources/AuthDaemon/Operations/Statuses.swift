import AuthProtocol

extension Operation {
    /// Sends `operation.status` to the requester and, when the requester
    /// leaves prompts to an agent, to its user's agent too: the touch cue
    /// is for a person, and a headless requester has none to show it to.
    func sendStatus(_ status: OperationStatus.Status, key: RegisteredKey?, holder: Holder? = nil, in broker: isolated Broker) {
        broker.sendStatus(status, request: id, key: key, holder: holder, to: session)
        guard session.leavesPromptsToAgent, let agent = agent(in: broker) else { return }
        let view = agentView(in: broker)
        _ = view.show(to: agent)
        let params = OperationStatus(
            request: view.token, status: status, authenticator: key?.id, holder: holder, operation: info(shownIn: view))
        agent.send(.notification(method: Method.operationStatus, params: encode(params)))
    }
}
