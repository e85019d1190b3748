import AuthProtocol

extension AuthClient {
    /// `agent.register`: this connection becomes its user's session agent,
    /// asked the prompts their requesters leave out (authkeyd-protocol(7),
    /// "Agents"). Set the request handler first: prompts may come at once.
    public func registerAgent() async throws(AuthClientError) -> AgentRegistration {
        try await call(Method.registerAgent, [String: String](), as: AgentRegistration.self)
    }

    /// `agent.unregister`: no longer the agent; the prompts held stay to answer.
    public func unregisterAgent() async throws(AuthClientError) -> AgentRegistration {
        try await call(Method.unregisterAgent, [String: String](), as: AgentRegistration.self)
    }
}
