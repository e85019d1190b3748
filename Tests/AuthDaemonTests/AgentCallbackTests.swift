@testable import AuthDaemon
import AuthProtocol
import BrokerTestSupport
import Foundation
import Glibc
import SystemKit
import TestSupport
import Testing

/// Agents' callbacks (authkeyd-protocol(7), "Agents"; issue 29, item 8):
/// an agent that registers one does not keep the daemon running, and the
/// daemon calls it back when a prompt of its user's needs it. The test
/// plays the agent over raw connections and a callback socket of its own,
/// so that every line either side sends is seen.
@Suite(.timeLimit(.minutes(2))) struct AgentCallbackTests {
    static let pinKey = ["--virtual-key", "name=PIN key,pin=1234"]

    /// An agent's callback socket, listened on by the test.
    final class Callback {
        let name = "\(AgentCallback.namePrefix)test.\(AgentCallback.token(from: (0..<8).map { _ in UInt8.random(in: 0...255) }))"
        let token = AgentCallback.token(from: (0..<32).map { _ in UInt8.random(in: 0...255) })
        private(set) var listener: Int32 = -1

        init(listening: Bool = true) throws {
            if listening { try listen() }
        }

        deinit { stopListening() }

        func listen() throws {
            listener = try UnixSocket.listen(abstractName: name)
            try setNonBlocking(listener)
        }

        func stopListening() {
            guard listener >= 0 else { return }
            FileDescriptor.close(listener)
            listener = -1
        }

        var params: JSONValue { ["callback": .string(name), "token": .string(token)] }

        /// The next connection made to the socket within `timeout`, looked
        /// for between sleeps.
        func nextConnection(within timeout: Duration = .seconds(5)) async -> RawRPCClient? {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let fd = try? UnixSocket.accept(listener, nonBlocking: true) { return RawRPCClient(connectedDescriptor: fd) }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return nil
        }
    }

    static func register(_ agent: RawRPCClient, id: Int = 1, _ params: JSONValue?) async -> JSONValue? {
        agent.request(id, Method.registerAgent, params)
        return await agent.next { $0.isReply(to: id) }
    }

    /// A raw connection registered as this process's user's agent with `callback`.
    static func agent(of daemon: InProcessBroker, calledBackAt callback: Callback) async throws -> RawRPCClient {
        let agent = try daemon.rawClient()
        let reply = try #require(await register(agent, callback.params))
        #expect(reply["result"]?["registered"] == true && reply["result"]?["callback"] == true, "\(reply)")
        return agent
    }

    static func headlessRequest(_ daemon: InProcessBroker) async throws -> RawRPCClient {
        let requester = try daemon.rawClient()
        requester.request(1, Method.hello, ["client": "headless-test/1", "ui": []])
        #expect(await requester.next { $0.isReply(to: 1) }?["result"] != nil)
        requester.request(2, Method.createCredential, try JSONValueEncoder().encode(WebAuthnFixtures.createParams(residentKey: .required)))
        return requester
    }

    // MARK: - Registering

    @Test func aCallbackTheDaemonReachesIsKeptInTheStateDirectory() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        _ = try await Self.agent(of: daemon, calledBackAt: callback)
        let file = daemon.directory.file("agents.json")
        let written = await eventually { fileText(file).contains(callback.name) }
        #expect(written, "agents.json: \(fileText(file))")
        var status = stat()
        #expect(stat(file, &status) == 0 && status.st_mode & 0o077 == 0, "the file of tokens is the daemon's alone")
        // The daemon's check that it can reach the socket: a connection that says nothing.
        let check = try #require(await callback.nextConnection(), "the daemon did not check the callback")
        #expect(await check.hangsUp())
    }

    @Test func badCallbacksAreRefusedWithTheReason() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let good = try Callback(listening: false)
        let cases: [(params: JSONValue, says: String)] = [
            (["callback": "someone-else.socket", "token": .string(good.token)], "authkeyd-agent."),
            (["callback": .string(good.name + "/x"), "token": .string(good.token)], "only letters, digits"),
            (["callback": .string(good.name + String(repeating: "x", count: 100)), "token": .string(good.token)], "at most 100 bytes"),
            (["callback": .string(good.name), "token": "abc"], "64 lowercase hexadecimal digits"),
            (["callback": .string(good.name), "token": .string(good.token.uppercased())], "64 lowercase hexadecimal digits"),
            (["callback": .string(good.name)], "callback without token"),
            (["token": .string(good.token)], "token without callback"),
            (["callback": 7, "token": .string(good.token)], "invalid params"),
        ]
        let agent = try daemon.rawClient()
        for (index, bad) in cases.enumerated() {
            let reply = try #require(await Self.register(agent, id: index + 1, bad.params))
            #expect(reply.errorReason == "invalidParams", "\(bad.params.jsonText): \(reply)")
            let message = reply["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains(bad.says), "\(bad.params.jsonText): \(message)")
            #expect(!message.contains(good.token), "a token in an error message")
        }
        // Refused, nothing was registered: a requester's PIN prompt finds no agent.
        let requester = try await Self.headlessRequest(daemon)
        #expect(await requester.next { $0.isReply(to: 2) }?.errorReason == "pinRequired")
    }

    @Test func aCallbackNothingListensAtIsNotKeptAndTheAgentIsRegisteredAsBefore() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback(listening: false)
        let agent = try daemon.rawClient()
        let reply = try #require(await Self.register(agent, callback.params))
        #expect(reply["result"]?["registered"] == true)
        #expect(reply["result"]?["callback"] == false, "\(reply)")
        let why = reply["result"]?["callbackError"]?.stringValue ?? ""
        #expect(why.contains("nothing listens at @\(callback.name)"), "\(why)")

        // It is the agent all the same, while it stays connected.
        let requester = try await Self.headlessRequest(daemon)
        #expect(await agent.next { $0.method == Prompt.Kind.enterPin.method } != nil)
        requester.disconnect()
    }

    /// A name another user listens at: the daemon would be sending the
    /// agent's prompts to them. (As root, with nobody through setpriv.)
    @Test func aCallbackAnotherUserListensAtIsNotKept() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv")
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback(listening: false)
        let nobody = try NobodysSocket(callback.name)
        try #require(await nobody.isListening())
        let reply = try #require(await Self.register(try daemon.rawClient(), callback.params))
        #expect(reply["result"]?["callback"] == false, "\(reply)")
        let why = reply["result"]?["callbackError"]?.stringValue ?? ""
        #expect(why.contains("is a socket of uid \(OtherUser.nobodyUID)'s"), "\(why)")
    }

    // MARK: - Idleness

    @Test func anAgentWithACallbackLetsTheDaemonExitWhenIdleAndOneWithoutKeepsIt() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let plain = try daemon.rawClient()
        #expect(await Self.register(plain, nil)?["result"]?["callback"] == nil)
        let kept = IdleTimerTests.IdleWait(daemon)
        #expect(await kept.took(within: IdleTimerTests.after * 3) == nil, "the wait ended with an agent connected that cannot be called back")
        plain.disconnect()
        _ = await kept.took()

        let callback = try Callback()
        let agent = try await Self.agent(of: daemon, calledBackAt: callback)
        let wait = IdleTimerTests.IdleWait(daemon)
        #expect(await wait.took() != nil, "an agent the daemon can call back kept it running")
        withExtendedLifetime(agent) {}
    }

    /// While the agent is asked something the daemon waits for it; once
    /// the request ends, the agent is dormant again.
    @Test func anAgentShownAPromptIsDormantAgainOnceTheRequestEnds() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        let agent = try await Self.agent(of: daemon, calledBackAt: callback)
        let requester = try await Self.headlessRequest(daemon)
        _ = try #require(await agent.next { $0.method == Prompt.Kind.enterPin.method })
        let asked = IdleTimerTests.IdleWait(daemon)
        #expect(await asked.took(within: IdleTimerTests.after * 3) == nil, "the daemon left a prompt waiting")
        requester.disconnect()
        // The requester gone, the prompt ends; the agent is idle again.
        #expect(await agent.next { $0.method == Method.operationCancelled } != nil)
        #expect(await asked.took() != nil, "the agent kept the daemon once the request had ended")
    }

    // MARK: - Calling back

    @Test func theDaemonCallsTheAgentBackForAPromptWithItsTokenAndTheAgentAnswers() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        try await Self.agent(of: daemon, calledBackAt: callback).disconnect()
        _ = await callback.nextConnection()  // the daemon's check

        let requester = try await Self.headlessRequest(daemon)
        let calledBack = try #require(await callback.nextConnection(), "the daemon did not call the agent back")
        let first = try #require(await calledBack.next { _ in true })
        #expect(first.method == Method.agentCallback, "\(first)")
        #expect(first["params"]?["token"]?.stringValue == callback.token, "\(first)")
        // The agent registers on the connection the daemon made, as on its own.
        let registered = try #require(await Self.register(calledBack, callback.params))
        #expect(registered["result"]?["callback"] == true, "\(registered)")
        let pinPrompt = try #require(await calledBack.next { $0.method == Prompt.Kind.enterPin.method })
        calledBack.answer(pinPrompt, with: ["action": "proceed", "pin": "1234"])
        let naming = try #require(await calledBack.next { $0.method == Prompt.Kind.describeAuthenticator.method })
        calledBack.answer(naming, with: ["action": "proceed", "friendlyName": "called back"])
        let reply = try #require(await requester.next { $0.isReply(to: 2) })
        #expect(reply["result"]?["registration"]?["friendlyName"] == "called back", "\(reply)")
    }

    @Test func aCallbackFoundDeadIsForgotten() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        try await Self.agent(of: daemon, calledBackAt: callback).disconnect()
        callback.stopListening()
        let requester = try await Self.headlessRequest(daemon)
        #expect(await requester.next { $0.isReply(to: 2) }?.errorReason == "pinRequired")
        let file = daemon.directory.file("agents.json")
        #expect(await eventually { !fileText(file).contains(callback.name) }, "agents.json: \(fileText(file))")

        // Forgotten: a socket there again is not called.
        try callback.listen()
        let again = try await Self.headlessRequest(daemon)
        #expect(await again.next { $0.isReply(to: 2) }?.errorReason == "pinRequired")
        #expect(await callback.nextConnection(within: .milliseconds(300)) == nil)
    }

    /// The agent ended and another user bound its name: the daemon must
    /// not give them the token, nor its user's prompts.
    @Test func aCallbackTakenByAnotherUserIsNotCalledAndIsForgotten() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv")
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        try await Self.agent(of: daemon, calledBackAt: callback).disconnect()
        callback.stopListening()
        let nobody = try NobodysSocket(callback.name)
        try #require(await nobody.isListening())

        let requester = try await Self.headlessRequest(daemon)
        #expect(await requester.next { $0.isReply(to: 2) }?.errorReason == "pinRequired")
        let heard = await nobody.heard()
        #expect(!heard.contains(callback.token) && !heard.contains("agent."), "nobody heard: \(heard)")
        let file = daemon.directory.file("agents.json")
        #expect(await eventually { !fileText(file).contains(callback.name) }, "agents.json: \(fileText(file))")
    }

    @Test func anAgentCalledBackThatDoesNotRegisterIsGivenUpOn() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        try await Self.agent(of: daemon, calledBackAt: callback).disconnect()
        _ = await callback.nextConnection()

        let requester = try await Self.headlessRequest(daemon)
        let calledBack = try #require(await callback.nextConnection())
        // The request goes on without the agent, and the daemon hangs up on it.
        let reply = try #require(await requester.next(within: .seconds(10)) { $0.isReply(to: 2) })
        #expect(reply.errorReason == "pinRequired", "\(reply)")
        #expect(await calledBack.hangsUp())
    }

    @Test func aWaitingAgentThatIsReplacedHearsItAtItsCallback() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        try await Self.agent(of: daemon, calledBackAt: callback).disconnect()
        _ = await callback.nextConnection()

        let newer = try daemon.rawClient()
        #expect(await Self.register(newer, nil)?["result"]?["registered"] == true)
        let told = try #require(await callback.nextConnection(), "the waiting agent was not told")
        let replaced = try #require(await told.next { _ in true })
        #expect(replaced.method == Method.agentReplaced, "\(replaced)")
        #expect(replaced["params"]?["pid"]?.integerValue == Int64(getpid()))
        #expect(replaced["params"]?["token"]?.stringValue == callback.token, "the token proves it is the daemon's")
        #expect(await told.hangsUp())
    }

    @Test func unregisteringForgetsTheCallback() async throws {
        let daemon = try await InProcessBroker(Self.pinKey)
        let callback = try Callback()
        let agent = try await Self.agent(of: daemon, calledBackAt: callback)
        _ = await callback.nextConnection()
        agent.request(2, Method.unregisterAgent)
        #expect(await agent.next { $0.isReply(to: 2) }?["result"]?["registered"] == false)
        agent.disconnect()

        let requester = try await Self.headlessRequest(daemon)
        #expect(await requester.next { $0.isReply(to: 2) }?.errorReason == "pinRequired")
        #expect(await callback.nextConnection(within: .milliseconds(300)) == nil, "an unregistered agent was called back")
    }
}

extension RawRPCClient {
    /// Whether the daemon closes the connection within `timeout`, whatever it says first.
    func hangsUp(within timeout: Duration = .seconds(5)) async -> Bool {
        _ = await next(within: timeout) { _ in false }
        return closedByPeer
    }
}

/// An abstract socket bound by nobody (through setpriv): a Python listener
/// that prints what the first connection to it sends.
final class NobodysSocket {
    let program: StartedProgram

    init(_ name: String) throws {
        let script = """
            import socket, sys, select
            s = socket.socket(socket.AF_UNIX); s.bind("\\0" + sys.argv[1]); s.listen(4)
            print("listening", flush=True)
            if select.select([s], [], [], 10)[0]:
                c, _ = s.accept(); c.settimeout(1)
                try: data = c.recv(4096)
                except OSError: data = b""
                print("heard", data.decode(errors="replace"), flush=True)
            """
        program = try StartedProgram(OtherUser.command[0], Array(OtherUser.command.dropFirst()) + ["/usr/bin/python3", "-c", script, name])
    }

    func isListening() async -> Bool { await eventually { program.standardOutput.contains("listening") } }

    /// What the first connection sent, once one came and said it or closed.
    func heard() async -> String {
        _ = await eventually { program.standardOutput.contains("heard") }
        return program.standardOutput
    }
}
