import AuthProtocol

extension Broker {
    /// Asks the person behind the operation something (the UI handshake)
    /// and waits for `{action: proceed | cancel, …}`: through the
    /// requester's own connection when it answers the prompt, else through
    /// its user's agent (`promptAnswerer`). Cancel, an error reply, no
    /// reply within the prompt timeout, or the operation's cancellation
    /// all end the operation. A prompt nobody can answer gets its default
    /// (`defaultAnswer`) without being sent.
    func prompt(_ prompt: Prompt, for operation: Operation) async throws(RPCError) -> PromptReply {
        try operation.checkCancelled()
        let timeout = min(configuration.promptTimeout, operation.remaining)
        switch promptAnswerer(prompt.kind, for: operation) {
        case .requester:
            return try await operation.session.prompts.ask(prompt.kind.method, params(of: prompt), timeout: timeout, for: operation.request)
        case .agent(let agent):
            let view = agentView(of: operation)
            _ = view.show(to: agent)
            // The same prompt, its operation as the agent sees it.
            var shown = prompt
            shown.operation = agentOperationInfo(operation, view: view)
            return try await agent.prompts.ask(prompt.kind.method, params(of: shown), timeout: timeout, for: operation.request)
        case .nobody:
            return try defaultAnswer(to: prompt)
        }
    }

    /// A prompt's params; the protocol's own types always encode.
    private func params(of prompt: Prompt) -> JSONValue {
        do { return try prompt.params() } catch { preconditionFailure("prompts always encode: \(error)") }
    }
}
