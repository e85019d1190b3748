import AuthClient
import AuthProtocol

/// `authctl agent [--once]`: the session agent for the terminal it runs
/// on. It answers the security-key prompts of the user's programs that
/// cannot ask themselves (a script, a service, the OpenSSH provider),
/// as pkttyagent does for polkit.
struct AgentCommand: Sendable {
    static let options: Set<String> = ["once"]
    let once: Bool

    init(_ arguments: Arguments) throws(UsageError) {
        try arguments.check("agent", takes: Self.options)
        guard arguments.operands.isEmpty else { throw UsageError("agent takes no operands") }
        once = arguments.flags.contains("once")
    }

    func run(_ client: AuthClient) async throws(AuthClientError) {
        guard let terminal = Terminal.open() else {
            fail("agent asks its questions at a terminal, and has none: run it in one", .unavailable)
        }
        let ending = try await AgentLoop(client: client, frontEnd: TerminalAgent(terminal: terminal), once: once).run()
        switch ending {
        case .replaced, .served(succeeded: true):
            return
        case .served(succeeded: false):
            fail("the request it answered for did not succeed", .failure)
        case .daemonGone:
            fail("authkeyd closed the connection; no agent is registered now", .unavailable)
        }
    }
}
