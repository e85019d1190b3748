import AuthClient
import AuthProtocol
import BrokerTestSupport
import Glibc
import SystemKit
import TestSupport
import Testing

/// Session agents (authkeyd-protocol(7), "Agents"): the prompts a requester
/// leaves out go to its user's agent, with who asked; the agent hears how
/// each request it was shown ends; an agent or requester that goes away
/// ends the prompt at once. Over raw connections, so that every message
/// the daemon sends either side is seen.
@Suite(.timeLimit(.minutes(2))) struct AgentRoutingTests {
    static let pinKey = ["--virtual-key", "name=PIN key,pin=1234"]

    /// A raw connection registered as this process's user's agent.
    static func agent(of daemon: InProcessBroker) throws -> RawRPCClient {
        let agent = try daemon.rawClient()
        agent.request(1, Method.registerAgent)
        let reply = try #require(agent.read { $0.isReply(to: 1) })
        #expect(reply["result"]?["registered"] == true, "\(reply)")
        #expect(reply["result"]?["uid"]?.integerValue == Int64(getuid()), "\(reply)")
        return agent
    }

    /// A raw connection that answers no prompt (`hello {ui: []}`).
    static func headlessRequester(of daemon: InProcessBroker, answering prompts: [String] = []) throws -> RawRPCClient {
        let requester = try daemon.rawClient()
        requester.request(1, Method.hello, ["client": "headless-test/1", "ui": .array(prompts.map { .string($0) })])
        #expect(requester.read { $0.isReply(to: 1) }?["result"] != nil)
        return requester
    }

    static func createRequest() throws -> JSONValue {
        try JSONValueEncoder().encode(WebAuthnFixtures.createParams(residentKey: .required))
    }

    @Test func aHeadlessRequestersPromptsGoToTheAgentWithWhoAsked() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let agent = try Self.agent(of: daemon)
        let requester = try Self.headlessRequester(of: daemon)
        requester.request(2, Method.createCredential, try Self.createRequest())

        let pinPrompt = try #require(agent.read { $0.method == Prompt.Kind.enterPin.method })
        let operation = try #require(pinPrompt["params"]?["operation"])
        let token = try #require(operation["request"]?.stringValue)
        #expect(token.hasPrefix("op-"), "the daemon's name for the request, not the requester's id 2: \(operation)")
        #expect(operation["rpId"] == "example.org")
        let requesterInfo = try #require(operation["requester"], "\(operation)")
        #expect(requesterInfo["pid"]?.integerValue == Int64(getpid()))
        #expect(requesterInfo["uid"]?.integerValue == Int64(getuid()))
        #expect(requesterInfo["client"] == "headless-test/1")
        let comm = try #require(try AtomicFile.read("/proc/self/comm")).filter { $0 != 0x0A }
        #expect(requesterInfo["command"]?.stringValue == String(decoding: comm, as: UTF8.self))
        agent.answer(pinPrompt, with: ["action": "proceed", "pin": "1234"])

        let naming = try #require(agent.read { $0.method == Prompt.Kind.describeAuthenticator.method })
        #expect(naming["params"]?["operation"]?["request"]?.stringValue == token)
        agent.answer(naming, with: ["action": "proceed", "friendlyName": "agent-named"])
        let finished = try #require(agent.read { $0.method == Method.operationFinished })
        #expect(finished["params"]?["request"]?.stringValue == token)
        #expect(finished["params"]?["succeeded"] == true)

        // The requester saw no prompt, only its result; the name the agent gave stands.
        var requesterSaw: [JSONValue] = []
        let reply = try #require(requester.read { message in
            requesterSaw.append(message)
            return message.isReply(to: 2)
        })
        #expect(reply["result"]?["registration"]?["friendlyName"] == "agent-named", "\(reply)")
        #expect(!requesterSaw.contains { ($0.method ?? "").hasPrefix("ui.") }, "\(requesterSaw)")
    }

    @Test func theAgentHearsTheStatusesOfTheRequestsItServes() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Slow,presence=after:300ms"])
        let agent = try Self.agent(of: daemon)
        let requester = try Self.headlessRequester(of: daemon)
        requester.request(2, Method.createCredential, try JSONValueEncoder().encode(WebAuthnFixtures.createParams()))
        let touch = try #require(agent.read { $0.operationStatus == "waitingForTouch" })
        #expect(touch["params"]?["request"]?.stringValue?.hasPrefix("op-") == true)
        #expect(touch["params"]?["operation"]?["requester"]?["pid"]?.integerValue == Int64(getpid()), "\(touch)")
        let naming = try #require(agent.read { $0.method == Prompt.Kind.describeAuthenticator.method })
        agent.answer(naming, with: ["action": "proceed", "friendlyName": "slow"])
        #expect(requester.read { $0.isReply(to: 2) }?["result"] != nil)
        #expect(agent.read { $0.method == Method.operationFinished }?["params"]?["succeeded"] == true)
    }

    @Test func aRequesterThatAnswersEverythingNeverReachesTheAgent() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let agent = try Self.agent(of: daemon)
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["1234"], name: "mine")
        client.setUI(ui)
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        #expect(ui.pinRequests.count == 1)
        #expect(agent.readMessage(timeout: .milliseconds(300)) == nil, "the agent was sent something")
    }

    @Test func withoutAnAgentAPINIsRequiredAtOnce() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let requester = try Self.headlessRequester(of: daemon)
        let started = ContinuousClock.now
        requester.request(2, Method.createCredential, try Self.createRequest())
        let reply = try #require(requester.read { $0.isReply(to: 2) })
        #expect(ContinuousClock.now - started < .seconds(1), "never a wait for someone who is not there")
        #expect(reply.errorReason == "pinRequired", "\(reply)")
        #expect(reply["error"]?["message"]?.stringValue?.contains("no one can be asked for the PIN: start authctl agent") == true, "\(reply)")
    }

    @Test func anAgentThatGoesAwayMidPromptCancelsTheRequestAndFreesTheKey() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let agent = try Self.agent(of: daemon)
        let requester = try Self.headlessRequester(of: daemon)
        requester.request(2, Method.createCredential, try Self.createRequest())
        _ = try #require(agent.read { $0.method == Prompt.Kind.enterPin.method })
        let gone = ContinuousClock.now
        agent.disconnect()
        let reply = try #require(requester.read { $0.isReply(to: 2) })
        #expect(ContinuousClock.now - gone < .seconds(1))
        #expect(reply.errorReason == "cancelled", "\(reply)")

        // The key serves the next request at once, and with the agent gone the PIN is required again.
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234"]))
        let next = ContinuousClock.now
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        #expect(ContinuousClock.now - next < .seconds(5))
        requester.request(3, Method.createCredential, try Self.createRequest())
        #expect(requester.read { $0.isReply(to: 3) }?.errorReason == "pinRequired")
    }

    @Test func aRequesterThatGoesAwayMidPromptIsToldToTheAgent() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let agent = try Self.agent(of: daemon)
        let requester = try Self.headlessRequester(of: daemon)
        requester.request(2, Method.createCredential, try Self.createRequest())
        let pinPrompt = try #require(agent.read { $0.method == Prompt.Kind.enterPin.method })
        let token = pinPrompt["params"]?["operation"]?["request"]
        requester.disconnect()
        let cancelled = try #require(agent.read { $0.method == Method.operationCancelled })
        #expect(cancelled["params"]?["request"] == token)
        #expect(cancelled["params"]?["reason"] == "cancelled", "\(cancelled)")
        // A late answer finds nothing to end; the daemon serves on, the key is free.
        agent.answer(pinPrompt, with: ["action": "proceed", "pin": "1234"])
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234"]))
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        #expect(agent.readMessage(timeout: .milliseconds(200)).flatMap(\.method) != Method.operationFinished, "told once")
    }

    @Test func aNewerAgentReplacesTheOlder() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let first = try Self.agent(of: daemon)
        let second = try Self.agent(of: daemon)
        let replaced = try #require(first.read { $0.method == Method.agentReplaced })
        #expect(replaced["params"]?["pid"]?.integerValue == Int64(getpid()))
        let requester = try Self.headlessRequester(of: daemon)
        requester.request(2, Method.createCredential, try Self.createRequest())
        let pinPrompt = try #require(second.read { $0.method == Prompt.Kind.enterPin.method })
        second.answer(pinPrompt, with: ["action": "proceed", "pin": "1234"])
        let naming = try #require(second.read { $0.method == Prompt.Kind.describeAuthenticator.method })
        second.answer(naming, with: ["action": "proceed", "friendlyName": "second"])
        #expect(requester.read { $0.isReply(to: 2) }?["result"] != nil)
        #expect(first.readMessage(timeout: .milliseconds(200)) == nil, "the replaced agent is asked nothing")
    }

    @Test func anUnregisteredAgentIsAskedNothing() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let agent = try Self.agent(of: daemon)
        agent.request(2, Method.unregisterAgent)
        #expect(agent.read { $0.isReply(to: 2) }?["result"]?["registered"] == false)
        let requester = try Self.headlessRequester(of: daemon)
        requester.request(2, Method.createCredential, try Self.createRequest())
        #expect(requester.read { $0.isReply(to: 2) }?.errorReason == "pinRequired")
        #expect(agent.readMessage(timeout: .milliseconds(200)) == nil)
    }

    @Test func theAgentsAnswersAreCheckedAsTheRequestersWouldBe() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let agent = try Self.agent(of: daemon)
        let requester = try Self.headlessRequester(of: daemon)
        requester.request(2, Method.createCredential, try Self.createRequest())
        let first = try #require(agent.read { $0.method == Prompt.Kind.enterPin.method })
        agent.answer(first, with: ["action": "proceed", "pin": "0000"])
        let again = try #require(agent.read { $0.method == Prompt.Kind.enterPin.method })
        #expect(again["params"]?["reason"] == "invalid", "the key refused the agent's wrong PIN: \(again)")
        agent.answer(again, with: ["action": "maybe"])
        let reply = try #require(requester.read { $0.isReply(to: 2) })
        #expect(reply.errorReason == "cancelled", "\(reply)")
        #expect(agent.read { $0.method == Method.operationFinished }?["params"]?["succeeded"] == false)
    }

    @Test func aRequesterAnswersWhatItDeclaredAndTheAgentTheRest() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let agent = try Self.agent(of: daemon)
        let requester = try Self.headlessRequester(of: daemon, answering: ["enterPin"])
        requester.request(2, Method.createCredential, try Self.createRequest())
        let pinPrompt = try #require(requester.read { $0.method == Prompt.Kind.enterPin.method })
        #expect(pinPrompt["params"]?["operation"]?["requester"] == nil, "who asked is for agents")
        #expect(pinPrompt["params"]?["operation"]?["request"]?.integerValue == 2)
        requester.answer(pinPrompt, with: ["action": "proceed", "pin": "1234"])
        let naming = try #require(agent.read { $0.method == Prompt.Kind.describeAuthenticator.method })
        agent.answer(naming, with: ["action": "proceed", "friendlyName": "named by the agent"])
        let reply = try #require(requester.read { $0.isReply(to: 2) })
        #expect(reply["result"]?["registration"]?["friendlyName"] == "named by the agent", "\(reply)")
    }
}
