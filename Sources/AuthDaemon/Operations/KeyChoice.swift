import AuthProtocol
import FIDO2
import Glibc

extension Operation {
    /// The key for the operation: the one the request named, else one of
    /// the keys that can serve it (`KeyRequirements.eligible`): the only
    /// one, or the one the user picks (`ui.selectAuthenticator`), by
    /// choosing it or by touching it. Either way the key meets
    /// `requirements`, or the request ends with the reason it does not.
    func chooseKey(
        named id: String?, meeting requirements: KeyRequirements, in broker: isolated Broker
    ) async throws(RPCError) -> RegisteredKey {
        let key: RegisteredKey
        if let id {
            key = try broker.requireKey(id)
        } else {
            var candidates = try requirements.eligible(broker.orderedKeys)
            if let holding = requirements.holding, !holding.credentialIDs.isEmpty, candidates.count > 1 {
                let probed = await probe(candidates, for: holding.credentialIDs, rpID: holding.rpID, in: broker)
                candidates = probed.candidates
                await label(probed.holding, in: broker)
            }
            key = try await chooseKey(from: candidates, in: broker)
        }
        try requirements.check(key)
        return key
    }

    /// One of `candidates`: the only one, or the one the user picks.
    private func chooseKey(from candidates: [RegisteredKey], in broker: isolated Broker) async throws(RPCError) -> RegisteredKey {
        guard !candidates.isEmpty else {
            throw RPCError(.noAuthenticator, "no security key is present; plug one in")
        }
        if candidates.count == 1 { return candidates[0] }
        let reply = try await prompt(
            .selectAuthenticator(SelectAuthenticatorPrompt(operation: info, authenticators: candidates.map { broker.wire($0) })),
            in: broker)
        if reply.touch == true {
            sendStatus(.selectingByTouch, key: nil, in: broker)
            guard let touched = try await broker.race(candidates, timeout: remaining, request: request) else {
                try checkCancelled()
                throw RPCError(.timeout, "no key was touched in time")
            }
            return touched
        }
        guard let chosen = reply.authenticator, let key = candidates.first(where: { $0.id == chosen }) else {
            throw RPCError(.cancelled, "the client chose \(reply.authenticator.map { "\"\($0)\"" } ?? "no key"), which was not offered")
        }
        return key
    }

    /// How long a silent probe may take on one key, waiting for it included.
    static let probeLimit: Duration = .seconds(2)

    /// Asks each key, silently (no touch, no PIN), which of `credentialIDs`
    /// it holds for the relying party, so that only those keys are offered.
    /// A key that cannot answer (busy, an error) stays a candidate; a key
    /// that answers "no credentials" does not.
    func probe(
        _ keys: [RegisteredKey], for credentialIDs: [[UInt8]], rpID: String, in broker: isolated Broker
    ) async -> (candidates: [RegisteredKey], holding: [String: [UInt8]]) {
        var silent = GetAssertionRequest(relyingPartyID: rpID, clientData: .hash([UInt8](repeating: 0, count: 32)))
        silent.allowList = credentialIDs
        silent.userPresence = .disabled
        let request = silent
        var holding: [String: [UInt8]] = [:]
        var unknown: [String] = []
        for key in keys {
            // A key another request holds, or another program has, is not
            // waited for: it stays a candidate, unasked.
            guard broker.tryAcquire(key) else {
                unknown.append(key.id)
                continue
            }
            defer { broker.release(key) }
            do {
                let assertion = try await perform(key, within: Self.probeLimit, in: broker) { device throws(FIDO2Error) in
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

    /// Names the keys that hold one of the owner's registered credentials
    /// after the names the user gave them when registering.
    private func label(_ holding: [String: [UInt8]], in broker: isolated Broker) async {
        guard let store = broker.store, let registrations = try? await store.registrations(for: owner) else { return }
        for (keyID, credentialID) in holding {
            let id = Base64URL.encode(credentialID)
            guard let name = registrations.first(where: { $0.id == id })?.friendlyName, let key = broker.keys[keyID],
                broker.keys.setName(name, of: key)
            else { continue }
            broker.notifyWatchers(Method.authenticatorChanged, AuthenticatorEvent(authenticator: broker.wire(key)))
        }
    }
}
