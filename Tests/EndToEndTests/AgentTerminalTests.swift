import AuthProtocol
import Foundation
import Glibc
import TestSupport
import Testing

/// `authctl agent` answering for a headless requester: the real daemon,
/// the real agent on a pseudo-terminal answered as a person would, and a
/// requester that is a plain Python socket client declaring `ui: []`
/// (so the kernel names it `python3`). Results are verified by py_webauthn.
@Suite(.timeLimit(.minutes(3)), .serialized) struct AgentTerminalTests {
    static let pinKey = ["--virtual-key", "name=PIN key,pin=1234"]
    static let requesterScript = repositoryPath("Tests/RelyingParty/headless_requester.py")

    /// The agent at a terminal of its own, registered once it says so.
    static func startAgent(_ daemon: DaemonProcess, as user: [String] = [], once: Bool = false) throws -> TerminalSession {
        try startAgent(at: daemon.socketPath, as: user, once: once)
    }

    static func startAgent(at socketPath: String, as user: [String] = [], once: Bool = false) throws -> TerminalSession {
        let agent = try TerminalSession(user + [builtProduct("authctl"), "--socket", socketPath, "agent"] + (once ? ["--once"] : []))
        try #require(agent.waitFor("authctl agent: answering"), "the agent did not register")
        return agent
    }

    /// A headless requester making one request; its reply is its standard output.
    static func request(_ daemon: DaemonProcess, _ method: String, _ params: some Encodable) throws -> StartedProgram {
        try request(at: daemon.socketPath, method, params)
    }

    static func request(at socketPath: String, _ method: String, _ params: some Encodable) throws -> StartedProgram {
        let input = try JSONValueEncoder().encode(params).jsonText
        return try StartedProgram("/usr/bin/python3", [requesterScript, socketPath, method], input: input)
    }

    static func reply(of requester: StartedProgram, within timeout: Duration = .seconds(20)) throws -> JSONValue {
        let run = requester.finish(within: timeout)
        try #require(run.succeeded, "\(run)")
        return try JSONParser().parse(Array(run.standardOutput.utf8.drop { $0 == 0x20 }.prefix { $0 != 0x0A }))
    }

    /// Kills the agent process itself (not the terminal around it) at once.
    static func killAgent(of daemon: DaemonProcess) throws {
        try killAgent(at: daemon.socketPath)
    }

    static func killAgent(at socketPath: String) throws {
        let result = try run("/usr/bin/pkill", ["-KILL", "-f", "authctl --socket \(socketPath) agent"])
        try #require(result.status == 0, "no agent process to kill")
    }

    @Test func theAgentAnswersAHeadlessRequestersRegistrationAndTransaction() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try DaemonProcess(Self.pinKey)
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let agent = try Self.startAgent(daemon)

        let challenge = randomHash()
        let registering = try Self.request(
            daemon, Method.createCredential, WebAuthnFixtures.createParams(challenge: challenge, residentKey: .required))
        #expect(agent.waitFor("python3 (pid \(registering.pid), uid \(getuid()), headless-requester/1) wants to register at example.org as alice"))
        #expect(agent.waitFor("PIN for PIN key (8 attempts left): "))
        agent.type("1234")
        #expect(agent.waitFor("Name this security key [PIN key]: "))
        agent.type("agent-named")
        #expect(agent.waitFor("headless-requester/1): done"))
        let created = try Self.reply(of: registering)
        let credential = try #require(created["result"]?["credential"], "\(created)")
        #expect(created["result"]?["registration"]?["friendlyName"] == "agent-named")
        let registered = try RelyingPartyVerifier.verify("register", [
            "credential": credential, "challenge": .string(Base64URL.encode(challenge)), "origin": "https://example.org",
            "rpId": "example.org",
        ]).get()
        let id = try #require(credential["id"]?.stringValue)

        let assertionChallenge = randomHash()
        let asserting = try Self.request(
            daemon, Method.getCredential,
            WebAuthnFixtures.getParams(challenge: assertionChallenge, allow: [id], userVerification: .required, transaction: ["Payee": "Bob", "Amount": "5 EUR"]))
        #expect(agent.waitFor("python3 (pid \(asserting.pid), uid \(getuid()), headless-requester/1) wants to sign in to example.org"))
        // The details are confirmed before the key is asked for anything.
        #expect(agent.waitFor("Payee: Bob"))
        #expect(agent.waitFor("Sign this? [y/N] "))
        agent.type("y")
        // The key is asked for by the name it was given at registration.
        #expect(agent.waitFor("PIN for agent-named"))
        agent.type("1234")
        #expect(agent.waitFor("done"))
        let asserted = try Self.reply(of: asserting)
        let assertion = try #require(asserted["result"]?["credential"], "\(asserted)")
        let verified = try RelyingPartyVerifier.verify("authenticate", [
            "credential": assertion, "challenge": .string(Base64URL.encode(assertionChallenge)), "origin": "https://example.org",
            "rpId": "example.org", "publicKey": try #require(registered["publicKey"]),
        ])
        if case .failure(let failure) = verified { Issue.record("py_webauthn refused the assertion: \(failure)") }

        try Self.killAgent(of: daemon)
        let (_, transcript) = agent.finish()
        #expect(!transcript.contains("1234"), "a PIN was echoed:\n\(transcript)")
    }

    @Test func anAgentKilledMidPromptCancelsTheRequestWithinASecondAndFreesTheKey() async throws {
        let daemon = try DaemonProcess(Self.pinKey)
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let agent = try Self.startAgent(daemon)
        let requester = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        try #require(agent.waitFor("PIN for PIN key"))
        let killed = ContinuousClock.now
        try Self.killAgent(of: daemon)
        let reply = try Self.reply(of: requester)
        let took = ContinuousClock.now - killed
        #expect(took < .seconds(1), "the request ended \(took) after the agent died")
        #expect(reply.errorReason == "cancelled", "\(reply)")
        _ = agent.finish()

        // The key is free: a client that answers its own prompts uses it at once.
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234"]))
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
    }

    @Test func aRequesterKilledMidPromptIsCancelledAtTheAgent() async throws {
        let daemon = try DaemonProcess(Self.pinKey)
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let agent = try Self.startAgent(daemon)
        let doomed = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        try #require(agent.waitFor("PIN for PIN key"))
        doomed.signal(SIGKILL)
        #expect(agent.waitFor("python3 (pid \(doomed.pid), uid \(getuid()), headless-requester/1): cancelled: "))

        // The abandoned question took nothing: the next request's PIN is asked afresh and answers it.
        let next = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        #expect(agent.waitFor("python3 (pid \(next.pid)"))
        #expect(agent.waitFor("PIN for PIN key"))
        agent.type("1234")
        #expect(agent.waitFor("Name this security key"))
        agent.type("")
        #expect(try Self.reply(of: next)["result"] != nil)
        try Self.killAgent(of: daemon)
        _ = agent.finish()
    }

    @Test func aSecondAgentReplacesTheFirst() async throws {
        let daemon = try DaemonProcess(Self.pinKey)
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let first = try Self.startAgent(daemon)
        let second = try Self.startAgent(daemon)
        #expect(first.waitFor("another agent (pid "))
        let (status, transcript) = first.finish()
        #expect(status == 0, "a replaced agent ends without error: \(transcript)")

        let requester = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        #expect(second.waitFor("PIN for PIN key"))
        second.type("1234")
        #expect(second.waitFor("Name this security key"))
        second.type("")
        #expect(try Self.reply(of: requester)["result"] != nil)
        #expect(!transcript.contains("python3"), "the replaced agent was shown the request")
        try Self.killAgent(of: daemon)
        _ = second.finish()
    }

    @Test func anotherUsersAgentNeverSeesTheRequest() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv")
        let daemon = try DaemonProcess.openToEveryone(Self.pinKey)
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let nobodysAgent = try Self.startAgent(daemon, as: OtherUser.command)
        #expect(nobodysAgent.waitFor("of uid 65534's programs"))
        let started = ContinuousClock.now
        let requester = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        let reply = try Self.reply(of: requester)
        #expect(ContinuousClock.now - started < .seconds(3))
        #expect(reply.errorReason == "pinRequired", "root has no agent, so no one can be asked: \(reply)")
        #expect(reply["error"]?["message"]?.stringValue?.contains("start authctl agent") == true, "\(reply)")
        try Self.killAgent(of: daemon)
        let (_, transcript) = nobodysAgent.finish()
        #expect(!transcript.contains("python3") && !transcript.contains("PIN for"), "nobody's agent saw root's request:\n\(transcript)")
    }

    @Test func onceServesOneRequestAndExits() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Plain key"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let agent = try Self.startAgent(daemon, once: true)
        let requester = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams())
        #expect(agent.waitFor("Name this security key [Plain key]: "))
        agent.type("once")
        #expect(try Self.reply(of: requester)["result"]?["registration"]?["friendlyName"] == "once")
        let (status, transcript) = agent.finish()
        #expect(status == 0, "\(transcript)")
        #expect(transcript.contains("done"))
    }

    /// `--desktop` with no display asks at the terminal instead, as
    /// pinentry falls back to curses; with neither, it says why it cannot.
    @Test func theDesktopAgentWithoutADisplayAsksAtTheTerminal() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Plain key"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let noDisplay = ["/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY"]
        let agent = try TerminalSession(noDisplay + [builtProduct("authctl"), "--socket", daemon.socketPath, "agent", "--desktop", "--once"])
        #expect(agent.waitFor("no display (DISPLAY and WAYLAND_DISPLAY are unset): asking at this terminal instead"))
        try #require(agent.waitFor("authctl agent: answering"))
        let requester = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams())
        #expect(agent.waitFor("Name this security key [Plain key]: "))
        agent.type("at the terminal")
        #expect(try Self.reply(of: requester)["result"]?["registration"]?["friendlyName"] == "at the terminal")
        #expect(agent.finish().status == 0)

        let headless = try StartedProgram(
            "/usr/bin/env", ["-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", builtProduct("authctl"), "--socket", daemon.socketPath, "agent", "--desktop"],
            newSession: true)
        let run = headless.finish(within: .seconds(10))
        #expect(run.status == 69, "EX_UNAVAILABLE: \(run)")
        #expect(run.standardError.contains("no display (DISPLAY and WAYLAND_DISPLAY are unset) and no terminal"), "\(run)")
    }
}
