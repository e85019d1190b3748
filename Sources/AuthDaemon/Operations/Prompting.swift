import Dispatch
import AuthProtocol
import SystemKit

extension Broker {
    /// Asks the client something (the UI handshake): sends a JSON-RPC request
    /// and waits for `{action: proceed | cancel, …}`. Cancel, an error reply,
    /// no reply within the prompt timeout, or the operation's cancellation
    /// all end the operation. A prompt nobody can answer gets its default
    /// (`defaultAnswer`) without being sent.
    func prompt(_ method: String, _ params: some Encodable, for operation: Operation) async throws(RPCError) -> PromptReply {
        try operation.checkCancelled()
        guard canAnswer(method, for: operation) else { return try defaultAnswer(to: method, params) }
        let session = operation.session
        let id = session.newOutgoingID()
        let timeout = min(configuration.promptTimeout, operation.remaining)
        let outcome: Result<JSONValue, RPCError> = await withCheckedContinuation { continuation in
            session.awaitingReply[id] = continuation
            session.send(.request(id: id, method: method, params: encode(params)))
            operation.request.onCancel.append { [weak self] in
                self?.assumeIsolated { $0.answerPrompt(id, in: session, with: .failure(operation.request.cancellation!)) }
            }
            queue.asyncAfter(deadline: .now() + .milliseconds(timeout.wholeMilliseconds)) { [weak self] in
                self?.assumeIsolated {
                    $0.answerPrompt(id, in: session, with: .failure(RPCError(.timeout, "no answer to \(method) within \(timeout)")))
                }
            }
        }
        try operation.checkCancelled()
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

    /// Resumes a waiting prompt once; later answers find nothing to resume.
    private func answerPrompt(_ id: RPCID, in session: Session, with outcome: Result<JSONValue, RPCError>) {
        session.awaitingReply.removeValue(forKey: id)?.resume(returning: outcome)
    }
}
