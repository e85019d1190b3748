import AuthProtocol

extension Broker {
    /// Asks the person behind the operation something (the UI handshake)
    /// and waits for `{action: proceed | cancel, …}`: through the
    /// requester's own connection when it answers the prompt, else through
    /// its user's agent (`promptAnswerer`). Cancel, an error reply, no
    /// reply within the prompt timeout, or the operation's cancellation
    /// all end the operation. A prompt nobody can answer gets its default
    /// (`defaultAnswer`) without being sent.
    func prompt(_ method: String, _ params: some Encodable, for operation: Operation) async throws(RPCError) -> PromptReply {
        try operation.checkCancelled()
        let timeout = min(configuration.promptTimeout, operation.remaining)
        switch promptAnswerer(method, for: operation) {
        case .requester:
            return try await operation.session.prompts.ask(method, encode(params), timeout: timeout, for: operation.request)
        case .agent(let agent):
            let view = agentView(of: operation)
            _ = view.show(to: agent)
            // The same prompt, its operation as the agent sees it.
            guard case .object(var shown) = encode(params) else { preconditionFailure("prompts are objects") }
            shown["operation"] = encode(agentOperationInfo(operation, view: view))
            return try await agent.prompts.ask(method, .object(shown), timeout: timeout, for: operation.request)
        case .nobody:
            return try defaultAnswer(to: method, params)
        }
    }
}
