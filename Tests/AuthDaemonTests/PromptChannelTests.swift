import AuthProtocol
@testable import AuthDaemon
import BrokerTestSupport
import SystemKit
import TestSupport
import Testing

/// The prompt round trip on its own: replies matched to their prompts by
/// id, each prompt ended once (reply, timeout, cancellation, the client
/// gone), and the reply's shape checked.
@Suite(.timeLimit(.minutes(1))) struct PromptChannelTests {
    let host = PromptHost()

    @Test func aReplyIsMatchedByItsIdAndEndsThePromptOnce() async throws {
        let request = InFlightRequest(method: Method.createCredential)
        let asked = Task { try await host.ask(Prompt.Kind.enterPin.method, for: request) }
        let id = try await host.sentID(0)
        #expect(id == .string("authkeyd-1"), "the daemon's ids are strings, never the client's numbers")
        #expect(await !host.answer(.string("authkeyd-9"), .success(["action": "proceed"])), "an id nobody asked is dropped")
        #expect(await !host.answer(.number(1), .success(["action": "proceed"])))
        #expect(await host.answer(id, .success(["action": "proceed", "pin": "1234"])))
        #expect(try await asked.value.pin == "1234")
        #expect(await !host.answer(id, .success(["action": "proceed"])), "a second reply finds nothing to end")
        #expect(await host.pending == 0)
    }

    @Test func promptsAnsweredOutOfOrderEachGetTheirOwnReply() async throws {
        let request = InFlightRequest(method: Method.getCredential)
        let first = Task { try await host.ask(Prompt.Kind.enterPin.method, for: request) }
        let firstID = try await host.sentID(0)
        let second = Task { try await host.ask(Prompt.Kind.describeAuthenticator.method, for: request) }
        let secondID = try await host.sentID(1)
        #expect(firstID != secondID)
        #expect(await host.answer(secondID, .success(["action": "proceed", "friendlyName": "work"])))
        #expect(await host.answer(firstID, .success(["action": "proceed", "pin": "0000"])))
        #expect(try await first.value.pin == "0000")
        #expect(try await second.value.friendlyName == "work")
    }

    @Test func whatIsNotAProceedEndsTheRequestAsCancelled() async throws {
        let answers: [(Result<JSONValue, RPCError>, String)] = [
            (.success(["action": "cancel"]), "cancelled at ui.enterPin"),
            (.success(["action": 5]), "the client's answer to ui.enterPin is not {action: proceed|cancel}"),
            (.success("proceed"), "the client's answer to ui.enterPin is not {action: proceed|cancel}"),
            (.failure(RPCError(.internalError, "no UI here")), "the client answered ui.enterPin with an error: no UI here"),
        ]
        for (index, (answer, message)) in answers.enumerated() {
            let request = InFlightRequest(method: Method.createCredential)
            let asked = Task { try await host.ask(Prompt.Kind.enterPin.method, for: request) }
            #expect(await host.answer(try await host.sentID(index), answer))
            let error = await failure(of: asked)
            #expect(error?.reason == .cancelled && error?.message.hasPrefix(message) == true, "\(String(describing: error))")
        }
    }

    @Test func anErrorReplyThatIsATimeoutOrCancellationKeepsItsReason() async throws {
        for (index, reason) in [ErrorReason.timeout, .cancelled, .shuttingDown].enumerated() {
            let request = InFlightRequest(method: Method.createCredential)
            let asked = Task { try await host.ask(Prompt.Kind.selectAuthenticator.method, for: request) }
            #expect(await host.answer(try await host.sentID(index), .failure(RPCError(reason, "the client's own words"))))
            let error = await failure(of: asked)
            #expect(error?.reason == reason && error?.message == "the client's own words")
        }
    }

    @Test func cancellingTheRequestEndsItsPromptWithTheReason() async throws {
        let request = InFlightRequest(method: Method.createCredential)
        let asked = Task { try await host.ask(Prompt.Kind.enterPin.method, for: request) }
        let id = try await host.sentID(0)
        await host.cancel(request, RPCError(.cancelled, "cancelled by the client"))
        let error = await failure(of: asked)
        #expect(error?.reason == .cancelled && error?.message == "cancelled by the client")
        #expect(await host.pending == 0)
        #expect(await !host.answer(id, .success(["action": "proceed"])), "a reply after the cancel is dropped")
    }

    @Test func aCancelledRequestAsksNothing() async throws {
        let request = InFlightRequest(method: Method.createCredential)
        await host.cancel(request, RPCError(.timeout, "too late"))
        let error = await failure(of: Task { try await host.ask(Prompt.Kind.enterPin.method, for: request) })
        #expect(error?.reason == .timeout)
        #expect(host.outbox.messages.isEmpty)
    }

    @Test func theClientGoingEndsEveryPrompt() async throws {
        let one = InFlightRequest(method: Method.createCredential), other = InFlightRequest(method: Method.getCredential)
        let first = Task { try await host.ask(Prompt.Kind.enterPin.method, for: one) }
        _ = try await host.sentID(0)
        let second = Task { try await host.ask(Prompt.Kind.confirmTransaction.method, for: other) }
        _ = try await host.sentID(1)
        await host.cancelAll(RPCError(.cancelled, "the client disconnected"))
        for asked in [first, second] {
            let error = await failure(of: asked)
            #expect(error?.reason == .cancelled && error?.message == "the client disconnected")
        }
        #expect(await host.pending == 0)
    }

    @Test func noReplyInTimeIsATimeout() async throws {
        let request = InFlightRequest(method: Method.createCredential)
        let started = ContinuousClock.now
        let error = await failure(of: Task { try await host.ask(Prompt.Kind.enterPin.method, timeout: .milliseconds(100), for: request) })
        #expect(error?.reason == .timeout && error?.message.hasPrefix("no answer to ui.enterPin within") == true)
        // That it ends, not how fast: the suite runs beside every other
        // in-process suite on two cores, where 100 ms can take seconds.
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(await host.pending == 0)
    }

    /// Through the broker, as a client speaks it: replies with ids the
    /// daemon did not ask, or that are the client's own, answer nothing;
    /// the one with the prompt's id does.
    @Test func throughTheBrokerOnlyTheReplyWithThePromptsIdAnswersIt() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Work Key"])
        let client = try daemon.rawClient()
        client.request(1, Method.createCredential, try JSONValueEncoder().encode(WebAuthnFixtures.createParams()))
        let prompt = try #require(client.readRequest())
        #expect(prompt["method"]?.stringValue == Prompt.Kind.describeAuthenticator.method)
        let id = try #require(prompt["id"]?.stringValue)
        #expect(id.hasPrefix("authkeyd-"))
        client.send(#"{"jsonrpc":"2.0","id":"authkeyd-99","result":{"action":"proceed","friendlyName":"Wrong"}}"# + "\n")
        client.send(#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"not a prompt's"}}"# + "\n")
        client.send(#"{"jsonrpc":"2.0","id":"\#(id)","result":{"action":"proceed","friendlyName":"Desk"}}"# + "\n")
        let reply = try #require(client.readReply())
        #expect(reply["id"] == 1, "\(reply)")
        #expect(reply["result"]?["registration"]?["friendlyName"]?.stringValue == "Desk", "\(reply)")
    }

    /// The error a prompt ended with, or nil when it proceeded.
    private func failure(of asked: Task<PromptReply, any Error>) async -> RPCError? {
        do {
            _ = try await asked.value
            return nil
        } catch {
            return error as? RPCError
        }
    }
}

/// A stand-in for the broker: an actor on a queue of its own, which the
/// channel is confined to, and whose messages to the client are kept.
actor PromptHost {
    private let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated let outbox: Outbox
    private let channel: PromptChannel

    init() {
        let executor = QueueExecutor(label: "prompt-channel-tests")
        let outbox = Outbox()
        self.executor = executor
        self.outbox = outbox
        channel = PromptChannel(queue: executor.queue) { outbox.append($0) }
    }

    func ask(_ method: String, timeout: Duration = .seconds(20), for request: InFlightRequest) async throws(RPCError) -> PromptReply {
        try await channel.ask(method, ["operation": "test"], timeout: timeout, for: request)
    }

    func answer(_ id: RPCID, _ outcome: Result<JSONValue, RPCError>) -> Bool { channel.answer(id, with: outcome) }
    func cancel(_ request: InFlightRequest, _ reason: RPCError) { request.cancel(reason) }
    func cancelAll(_ reason: RPCError) { channel.cancelAll(reason) }
    var pending: Int { channel.pending }

    /// The id of the `index`th prompt sent, once it has been sent.
    nonisolated func sentID(_ index: Int) async throws -> RPCID {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let messages = outbox.messages
            if messages.count > index, case .request(let id, _, _) = messages[index] { return id }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw InProcessBrokerError("prompt \(index) was not sent")
    }
}

/// What the channel sent, as the client would have read it.
final class Outbox: Sendable {
    private let sent = Protected<[RPCMessage]>([])
    func append(_ message: RPCMessage) { sent.withLock { $0.append(message) } }
    var messages: [RPCMessage] { sent.withLock { $0 } }
}
