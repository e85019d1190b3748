import AuthProtocol
import Dispatch
import SystemKit

/// The daemon → client direction of one connection: prompts (`ui.*`) go
/// out as JSON-RPC requests with ids of the daemon's own, and the client's
/// replies are matched back to them here. Each prompt ends once: with the
/// reply, at its timeout, when the request it serves is cancelled, or when
/// the client goes (`cancelAll`); whatever comes after finds nothing to end.
///
/// Confined to the broker's queue, like the `Session` that owns it: `ask`
/// runs on its caller's actor, the broker hands replies in from
/// `received`, and the timeouts fire on the same queue.
final class PromptChannel: @unchecked Sendable {
    private struct Waiting {
        let continuation: CheckedContinuation<Result<JSONValue, RPCError>, Never>
        let timeout: DispatchWorkItem
    }

    private let queue: DispatchQueue
    private let send: (RPCMessage) -> Void
    private var waiting: [RPCID: Waiting] = [:]
    private var nextID: Int64 = 1

    /// `send` writes one message to the client; `queue` is the one the
    /// channel is confined to, where its timeouts fire.
    init(queue: DispatchQueue, send: @escaping (RPCMessage) -> Void) {
        self.queue = queue
        self.send = send
    }

    /// How many prompts await a reply.
    var pending: Int { waiting.count }

    /// Sends `method` and waits for the client's `{action: proceed, …}`.
    /// The request's cancellation reason wins over any reply; no reply
    /// within `timeout` is `timeout`; an error reply, a reply of another
    /// shape, or `cancel` end the request as `cancelled`.
    func ask(
        _ method: String, _ params: JSONValue, timeout: Duration, for request: InFlightRequest,
        isolation: isolated (any Actor)? = #isolation
    ) async throws(RPCError) -> PromptReply {
        if let reason = request.cancellation { throw reason }
        let id = newID()
        let outcome: Result<JSONValue, RPCError> = await withCheckedContinuation(isolation: isolation) { continuation in
            let expiry = DispatchWorkItem { [weak self] in
                self?.answer(id, with: .failure(RPCError(.timeout, "no answer to \(method) within \(timeout)")))
            }
            waiting[id] = Waiting(continuation: continuation, timeout: expiry)
            send(.request(id: id, method: method, params: params))
            request.onCancel.append { [weak self, unowned request] in
                self?.answer(id, with: .failure(request.cancellation ?? RPCError(.cancelled, "cancelled")))
            }
            queue.asyncAfter(deadline: .now() + .milliseconds(timeout.wholeMilliseconds), execute: expiry)
        }
        if let reason = request.cancellation { throw reason }
        return try Self.reply(to: method, outcome)
    }

    /// A reply from the client, from `Broker.received`. Returns false when
    /// no prompt waits for `id` (never asked, or already ended), and the
    /// reply is dropped.
    @discardableResult
    func answer(_ id: RPCID, with outcome: Result<JSONValue, RPCError>) -> Bool {
        guard let prompt = waiting.removeValue(forKey: id) else { return false }
        prompt.timeout.cancel()
        prompt.continuation.resume(returning: outcome)
        return true
    }

    /// Ends every prompt waiting (the client is gone) with `reason`.
    func cancelAll(_ reason: RPCError) {
        let ended = waiting
        waiting = [:]
        for prompt in ended.values {
            prompt.timeout.cancel()
            prompt.continuation.resume(returning: .failure(reason))
        }
    }

    /// A fresh id for a daemon → client request. Strings, so that they can
    /// never be mistaken for the client's own numeric ids in logs.
    private func newID() -> RPCID {
        defer { nextID += 1 }
        return .string("authkeyd-\(nextID)")
    }

    /// What a reply means for the request: the client's answer when it
    /// proceeds, else the error that ends the request. A timeout, a
    /// cancellation or a shutdown keeps its own reason; any other error
    /// the client sent back is its way of cancelling.
    static func reply(to method: String, _ outcome: Result<JSONValue, RPCError>) throws(RPCError) -> PromptReply {
        switch outcome {
        case .failure(let error) where error.reason == .timeout || error.reason == .cancelled || error.reason == .shuttingDown:
            throw error
        case .failure(let error):
            throw RPCError(.cancelled, "the client answered \(method) with an error: \(error.message)")
        case .success(let result):
            let reply: PromptReply
            do { reply = try decode(PromptReply.self, result) } catch {
                throw RPCError(.cancelled, "the client's answer to \(method) is not {action: proceed|cancel}: \(error.message)")
            }
            guard reply.action == .proceed else { throw RPCError(.cancelled, "cancelled at \(method)") }
            return reply
        }
    }
}
