import AuthProtocol
import Crypto
import FIDO2
import SystemKit

/// What a `credentials.get` asks of the key's hmac-secret, through one of
/// its two faces: WebAuthn `prf` (inputs hashed into salts as WebAuthn
/// Level 3 §10.1.4 says, so the outputs equal a browser's) or
/// `hmacGetSecret` (CTAP's raw 32-byte salts, as libfido2 programs use).
///
/// Salts and outputs never appear in an error message or a log line.
struct HMACSecretPlan: Sendable {
    enum Face: Sendable { case prf, hmacGetSecret }

    let face: Face
    /// 32 bytes, or 64 for two outputs, for any credential; nil when
    /// only `evalByCredential` was given.
    let salts: [UInt8]?
    /// `evalByCredential`: the salts for one credential id, which take
    /// precedence over `salts` for it.
    let saltsByCredential: [[UInt8]: [UInt8]]

    /// The plan a request's extensions make; nil when they ask for neither.
    static func from(_ extensions: GetExtensions?, allowList: [[UInt8]]) throws(RPCError) -> HMACSecretPlan? {
        switch (extensions?.prf, extensions?.hmacGetSecret) {
        case (nil, nil):
            return nil
        case (.some, .some):
            throw RPCError(.invalidParams, "invalid params: extensions: give prf or hmacGetSecret, not both: they are two faces of the key's one hmac-secret")
        case (let prf?, nil):
            return try HMACSecretPlan(prf: prf, allowList: allowList)
        case (nil, let input?):
            var salts = try rawSalt(input.salt1, "salt1")
            if let salt2 = input.salt2 { salts += try rawSalt(salt2, "salt2") }
            return HMACSecretPlan(face: .hmacGetSecret, salts: salts, saltsByCredential: [:])
        }
    }

    private init(face: Face, salts: [UInt8]?, saltsByCredential: [[UInt8]: [UInt8]]) {
        self.face = face
        self.salts = salts
        self.saltsByCredential = saltsByCredential
    }

    /// WebAuthn's rules for `prf` at authentication: `evalByCredential`
    /// needs an allow list, and every id in it must be one the list names.
    private init(prf: PRFInputs, allowList: [[UInt8]]) throws(RPCError) {
        var byCredential: [[UInt8]: [UInt8]] = [:]
        if let evalByCredential = prf.evalByCredential, !evalByCredential.isEmpty {
            guard !allowList.isEmpty else {
                throw RPCError(.invalidParams, "invalid params: extensions.prf.evalByCredential needs allowCredentials that name each credential it lists")
            }
            for (id, values) in evalByCredential {
                guard let credentialID = Base64URL.decode(id), !credentialID.isEmpty else {
                    throw RPCError(.invalidParams, "invalid params: extensions.prf.evalByCredential: \"\(id.prefix(200))\" is not a base64url credential id")
                }
                guard allowList.contains(credentialID) else {
                    throw RPCError(.invalidParams, "invalid params: extensions.prf.evalByCredential: credential \(id.prefix(200)) is not in allowCredentials")
                }
                byCredential[credentialID] = Self.prfSalts(values)
            }
        }
        self.init(face: .prf, salts: prf.eval.map(Self.prfSalts), saltsByCredential: byCredential)
    }

    /// A raw hmac-secret salt: exactly 32 bytes (CTAP 2.1 §12.5).
    private static func rawSalt(_ salt: Base64URLBytes, _ member: String) throws(RPCError) -> [UInt8] {
        guard salt.bytes.count == 32 else {
            throw RPCError(.invalidParams, "invalid params: extensions.hmacGetSecret.\(member): must be 32 bytes, got \(salt.bytes.count); hash other inputs to 32 bytes, or use prf, which takes any")
        }
        return salt.bytes
    }

    /// SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input) for each input, concatenated.
    static func prfSalts(_ values: PRFValues) -> [UInt8] {
        let context = Array("WebAuthn PRF".utf8) + [0]
        var salts = SHA256.hash(context + values.first.bytes)
        if let second = values.second { salts += SHA256.hash(context + second.bytes) }
        return salts
    }

    /// Whether a `credentials.create` asks for hmac-secret through `prf`.
    /// `eval` is accepted and left unevaluated: outputs at registration
    /// need CTAP 2.2's hmac-secret-mc, which libfido2 1.12 cannot send, so
    /// the relying party asks at authentication, as WebAuthn allows.
    /// `evalByCredential` has no credential to refer to yet (WebAuthn:
    /// NotSupportedError).
    static func wantedAtRegistration(_ prf: PRFInputs?) throws(RPCError) -> Bool {
        guard let prf else { return false }
        guard prf.evalByCredential == nil else {
            throw RPCError(.invalidParams, "invalid params: extensions.prf.evalByCredential: not at registration, where no credential exists yet; use eval, or nothing")
        }
        return true
    }

    /// The salts for a credential: its own from `evalByCredential`, else `eval`'s.
    func salts(for credentialID: [UInt8]) -> [UInt8]? { saltsByCredential[credentialID] ?? salts }
}

/// The salts one getAssertion carries, and for which credential: outputs
/// are reported only when they answer the inputs given for the credential
/// the key used.
struct HMACSecretAttempt: Sendable {
    let plan: HMACSecretPlan?
    /// The request to send, the salts set.
    let request: GetAssertionRequest
    /// The credential the salts were chosen for; nil when for any.
    let chosenFor: [UInt8]?

    /// `clientExtensionResults` for the statement; its hmac-secret bytes
    /// are zeroed here, as is every copy made of them.
    func results(taking statement: inout AssertionStatement) -> JSONObject {
        defer { zeroSecret(&statement.hmacSecret) }
        guard let plan else { return [:] }
        var outputs: [[UInt8]] = []
        defer { for index in outputs.indices { zeroSecret(&outputs[index]) } }
        if let sent = request.hmacSalt, statement.hmacSecret.count == sent.count, answers(statement.credentialID) {
            outputs = stride(from: 0, to: sent.count, by: 32).map { Array(statement.hmacSecret[$0..<$0 + 32]) }
        }
        switch plan.face {
        case .prf:
            guard let first = outputs.first else { return ["prf": [:]] }
            var results: JSONObject = ["first": .string(Base64URL.encode(first))]
            if outputs.count > 1 { results["second"] = .string(Base64URL.encode(outputs[1])) }
            return ["prf": ["results": .object(results)]]
        case .hmacGetSecret:
            guard let first = outputs.first else { return [:] }
            var results: JSONObject = ["output1": .string(Base64URL.encode(first))]
            if outputs.count > 1 { results["output2"] = .string(Base64URL.encode(outputs[1])) }
            return ["hmacGetSecret": .object(results)]
        }
    }

    /// Whether the salts sent were the ones meant for `credentialID`: a key
    /// that used a credential the silent probe did not see must not have
    /// its outputs passed off as those of the credential's own inputs.
    private func answers(_ credentialID: [UInt8]) -> Bool {
        guard let plan else { return false }
        if let chosenFor { return chosenFor == credentialID }
        return plan.saltsByCredential[credentialID] == nil
    }
}

extension Operation {
    /// Sets the hmac-secret salts on an authentication's request. With
    /// `evalByCredential` and several allowed credentials, the key is asked
    /// silently (no touch) which one it will use, and the request is
    /// narrowed to it, so that its own inputs go with it, as browsers do.
    /// A key without hmac-secret in getInfo gets no salts: WebAuthn's
    /// `prf` then answers without `results`, `hmacGetSecret` not at all.
    func hmacSecretAttempt(
        _ plan: HMACSecretPlan?, _ request: GetAssertionRequest, on key: RegisteredKey, in broker: isolated Broker
    ) async -> HMACSecretAttempt {
        guard let plan, key.info.extensions.contains("hmac-secret") else {
            return HMACSecretAttempt(plan: plan, request: request, chosenFor: nil)
        }
        var attempt = request
        var chosenFor: [UInt8]?
        if !plan.saltsByCredential.isEmpty {
            if request.allowList.count == 1 {
                chosenFor = request.allowList[0]
            } else if let held = await probe([key], for: request.allowList, rpID: request.relyingPartyID, in: broker)
                .holding[key.id]
            {
                chosenFor = held
                attempt.allowList = [held]
            }
        }
        attempt.hmacSalt = chosenFor.flatMap(plan.salts(for:)) ?? plan.salts
        return HMACSecretAttempt(plan: plan, request: attempt, chosenFor: chosenFor)
    }
}
