import AuthProtocol
import FIDO2

extension Broker {
    /// The key for an operation: the one the request named, the only one
    /// present, or the one the user picks (`ui.selectAuthenticator`), by
    /// choosing it or by touching it.
    func chooseKey(named id: String?, from candidates: [RegisteredKey], for operation: Operation) async throws(RPCError) -> RegisteredKey {
        if let id { return try requireKey(id) }
        guard !candidates.isEmpty else {
            throw RPCError(.noAuthenticator, "no security key is present; plug one in")
        }
        if candidates.count == 1 { return candidates[0] }
        let reply = try await prompt(
            Prompt.selectAuthenticator,
            SelectAuthenticatorPrompt(operation: operation.info, authenticators: candidates.map(wire)), for: operation)
        if reply.touch == true {
            sendStatus(.selectingByTouch, request: operation.id, key: nil, to: operation.session)
            guard let touched = await race(candidates, timeout: operation.remaining, request: operation.request) else {
                try operation.checkCancelled()
                throw RPCError(.timeout, "no key was touched in time")
            }
            return touched
        }
        guard let chosen = reply.authenticator, let key = candidates.first(where: { $0.id == chosen }) else {
            throw RPCError(.cancelled, "the client chose \(reply.authenticator.map { "\"\($0)\"" } ?? "no key"), which was not offered")
        }
        return key
    }

    /// Asks each key, silently (no touch, no PIN), which of `credentialIDs`
    /// it holds for the relying party, so that only those keys are offered.
    /// A key that cannot answer (busy, an error) stays a candidate; a key
    /// that answers "no credentials" does not.
    func probe(
        _ keys: [RegisteredKey], for credentialIDs: [[UInt8]], rpID: String, operation: Operation
    ) async -> (candidates: [RegisteredKey], holding: [String: [UInt8]]) {
        var silent = GetAssertionRequest(relyingPartyID: rpID, clientData: .hash([UInt8](repeating: 0, count: 32)))
        silent.allowList = credentialIDs
        silent.userPresence = .disabled
        let request = silent
        var holding: [String: [UInt8]] = [:]
        var unknown: [String] = []
        for key in keys {
            if keyQueues[key.id]?.busy == true {
                unknown.append(key.id)
                continue
            }
            do {
                let assertion = try await perform(key, for: operation) { device throws(FIDO2Error) in
                    try device.getAssertion(request).statements.map(\.credentialID)
                }
                if let first = assertion.first { holding[key.id] = first }
            } catch {
                if case .device(let error) = error, error == .noCredentials { continue }
                unknown.append(key.id)
            }
        }
        let candidates = keys.filter { holding[$0.id] != nil || unknown.contains($0.id) }
        // Nothing matched: perhaps a credential that hides without verification.
        return (candidates.isEmpty ? keys : candidates, holding)
    }
}
