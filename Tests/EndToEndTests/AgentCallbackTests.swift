import AuthProtocol
import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 29, item 8: a session agent does not keep a socket-activated
/// daemon running. The real `authctl agent` at a terminal registers a
/// callback; the daemon, started by a stand-in for systemd's socket
/// (Tests/Tools/socket_activator.py), exits when idle with the agent
/// registered, and a headless requester's connection starts it again,
/// which calls the agent back, so that the prompt reaches the agent and is
/// answered. Also: a daemon restarted (not idle) calls the agent back, an
/// agent replaced while it waits hears it, and a dead agent's callback is
/// forgotten.
@Suite(.timeLimit(.minutes(3)), .serialized) struct AgentCallbackTests {
    let directory = TemporaryDirectory(prefix: "authkeyd-agent-callback")

    func activate() throws -> SocketActivation {
        try SocketActivation(in: directory, [
            "--exit-idle", "500ms", "--usb", "no", "--state-dir", directory.file("state"), "--virtual-key", "name=PIN key,pin=1234",
        ])
    }

    /// A headless requester's registration, answered at `agent`: its PIN, then the key's name.
    func register(at socket: String, answeredBy agent: TerminalSession, naming name: String) throws -> JSONValue {
        let requester = try AgentTerminalTests.request(
            at: socket, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        #expect(agent.waitFor("python3 (pid \(requester.pid)"))
        #expect(agent.waitFor("PIN for PIN key"))
        agent.type("1234")
        #expect(agent.waitFor("Name this security key"))
        agent.type(name)
        return try AgentTerminalTests.reply(of: requester)
    }

    @Test func theDaemonExitsIdleWithAnAgentRegisteredAndTheNextPromptReachesIt() throws {
        let activation = try activate()
        defer { activation.stop() }
        let agent = try AgentTerminalTests.startAgent(at: activation.socket)
        #expect(waitUntil(timeout: .seconds(5)) { activation.lines("exited").count == 1 }, "the agent kept the daemon running: \(activation.output)")
        #expect(agent.waitFor("authkeyd exited, having nothing to do; this agent stays registered"))

        // Each time: the requester starts the daemon, the daemon calls the
        // agent back, the agent answers, and the daemon exits again.
        for round in 1...2 {
            let reply = try register(at: activation.socket, answeredBy: agent, naming: "round \(round)")
            #expect(reply["result"]?["registration"]?["friendlyName"]?.stringValue == "round \(round)", "\(reply)")
            #expect(waitUntil(timeout: .seconds(5)) { activation.lines("exited").count == round + 1 }, "\(activation.output)")
            #expect(agent.waitFor("authkeyd exited, having nothing to do"))
        }
        #expect(activation.lines("started").count == 3, "\(activation.output)")
        #expect(activation.lines("exited").allSatisfy { $0.hasSuffix(" 0") }, "\(activation.output)")
        let log = fileText(activation.log)
        #expect(log.contains("calling back the agent of uid \(getuid())"), "\(log)")

        // The agent gone, its callback is found dead at the next request
        // and forgotten: the request goes on without an agent, at once.
        try AgentTerminalTests.killAgent(at: activation.socket)
        let transcript = agent.finish().transcript
        #expect(!transcript.contains("1234"), "a PIN was echoed:\n\(transcript)")
        let started = ContinuousClock.now
        let requester = try AgentTerminalTests.request(
            at: activation.socket, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        let reply = try AgentTerminalTests.reply(of: requester)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(reply.errorReason == "pinRequired", "\(reply)")
        #expect(fileText(activation.log).contains("the agent of uid \(getuid()) is gone"), "\(fileText(activation.log))")
    }

    /// A new agent while the first waits for its call back: the first is
    /// told at its callback, says so and exits 0; the prompts go to the new one.
    @Test func anAgentReplacedWhileItWaitsHearsIt() throws {
        let activation = try activate()
        defer { activation.stop() }
        let first = try AgentTerminalTests.startAgent(at: activation.socket)
        #expect(waitUntil(timeout: .seconds(5)) { activation.lines("exited").count == 1 }, "\(activation.output)")
        try #require(first.waitFor("authkeyd exited, having nothing to do"))

        let second = try AgentTerminalTests.startAgent(at: activation.socket)
        #expect(first.waitFor("another agent (pid "), "the waiting agent was not told")
        let (status, transcript) = first.finish()
        #expect(status == 0, "a replaced agent ends without error: \(transcript)")

        let reply = try register(at: activation.socket, answeredBy: second, naming: "second")
        #expect(reply["result"]?["registration"]?["friendlyName"]?.stringValue == "second", "\(reply)")
        try AgentTerminalTests.killAgent(at: activation.socket)
        _ = second.finish()
    }

    /// A daemon stopped and started again (not an idle exit) keeps the
    /// callback in its state directory and calls the agent back; the
    /// agent, which used to exit 69 when the daemon closed its connection,
    /// waits for it.
    @Test func aRestartedDaemonCallsTheAgentBack() async throws {
        let first = try DaemonProcess(["--virtual-key", "name=PIN key,pin=1234"], directory: directory)
        _ = try await first.waitForKeys(1)
        let agent = try AgentTerminalTests.startAgent(first)
        _ = first.stop()
        #expect(agent.waitFor("authkeyd stopped; this agent stays registered"))

        let second = try DaemonProcess(["--virtual-key", "name=PIN key,pin=1234"], directory: directory)
        defer { _ = second.stop() }
        _ = try await second.waitForKeys(1)
        let reply = try register(at: second.socketPath, answeredBy: agent, naming: "after restart")
        #expect(reply["result"]?["registration"]?["friendlyName"]?.stringValue == "after restart", "\(reply)")
        try AgentTerminalTests.killAgent(of: second)
        _ = agent.finish()
    }
}
