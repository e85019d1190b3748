import AuthProtocol

extension Broker {
    /// Asks the client something (the UI handshake) through its session's
    /// `PromptChannel`, and waits for `{action: proceed | cancel, …}`.
    /// Cancel, an error reply, no reply within the prompt timeout, or the
    /// operation's cancellation all end the operation. A prompt nobody can
    /// answer gets its default (`defaultAnswer`) without being sent.
    func prompt(_ method: String, _ params: some Encodable, for operation: Operation) async throws(RPCError) -> PromptReply {
        try operation.checkCancelled()
        guard canAnswer(method, for: operation) else { return try defaultAnswer(to: method, params) }
        let timeout = min(configuration.promptTimeout, operation.remaining)
        return try await operation.session.prompts.ask(method, encode(params), timeout: timeout, for: operation.request)
    }
}
