import AuthProtocol

extension AuthClient {
    /// `agent.register`: this connection becomes its user's session agent,
    /// asked the prompts their requesters leave out (authkeyd-protocol(7),
    /// "Agents"). Set the request handler first: prompts may come at once.
    /// With a callback (`params`), the daemon may exit when idle and call
    /// the agent back there; the result says whether it keeps it.
    public func registerAgent(_ params: AgentRegisterParams = AgentRegisterParams()) async throws(AuthClientError) -> AgentRegistration {
        try await call(Method.registerAgent, params, as: AgentRegistration.self)
    }

    /// `agent.unregister`: no longer the agent; the prompts held stay to answer.
    public func unregisterAgent() async throws(AuthClientError) -> AgentRegistration {
        try await call(Method.unregisterAgent, [String: String](), as: AgentRegistration.self)
    }
}
