import AuthProtocol

extension Operation {
    /// Asks the person behind the operation something (the UI handshake)
    /// and waits for `{action: proceed | cancel, …}`: through the
    /// requester's own connection when it answers the prompt, else through
    /// its user's agent (`answerer`). Cancel, an error reply, no reply
    /// within the prompt timeout, or the operation's cancellation all end
    /// the operation. A prompt nobody can answer gets its default
    /// (`PromptAnswerer.defaultAnswer`) without being sent.
    func prompt(_ prompt: Prompt, in broker: isolated Broker) async throws(RPCError) -> PromptReply {
        try checkCancelled()
        let timeout = min(broker.configuration.promptTimeout, remaining)
        switch answerer(of: prompt.kind, in: broker) {
        case .requester:
            return try await session.prompts.ask(prompt.kind.method, Self.params(of: prompt), timeout: timeout, for: request)
        case .agent(let agent):
            let view = agentView(in: broker)
            _ = view.show(to: agent)
            // The same prompt, its operation as the agent sees it.
            var shown = prompt
            shown.operation = info(shownIn: view)
            return try await agent.prompts.ask(prompt.kind.method, Self.params(of: shown), timeout: timeout, for: request)
        case .nobody:
            return try PromptAnswerer.defaultAnswer(to: prompt)
        }
    }

    /// A prompt's params; the protocol's own types always encode.
    private static func params(of prompt: Prompt) -> JSONValue {
        do { return try prompt.params() } catch { preconditionFailure("prompts always encode: \(error)") }
    }
}
