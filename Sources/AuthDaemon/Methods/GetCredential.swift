import AuthProtocol
import Crypto
import FIDO2
import Glibc
import SystemKit

extension Broker {
    /// `credentials.get`: WebAuthn authentication through the handshake —
    /// keys probed silently for the allowed credentials, the user's choice
    /// among those that hold one, the transaction confirmed before the key
    /// is touched, then verification and the touch.
    ///
    /// When a key holds several discoverable credentials for the relying
    /// party (no allow list), the user picks one (`Operation.chooseCredential`).
    func getCredential(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let options = try decode(GetParams.self, params)
        let (rpID, origin) = try OriginCheck.resolve(rpID: options.rpId, origin: options.origin)
        // Checked now, built after the user confirmed the transaction.
        _ = try ClientDataInput.from(
            type: "webauthn.get", challenge: options.challenge, clientDataHash: options.clientDataHash, origin: origin,
            transaction: options.transaction)
        let allowed = (options.allowCredentials ?? []).filter { $0.type == "public-key" }.map(\.id.bytes)
        let largeBlob = try LargeBlobAccess(options.extensions?.largeBlob, allowList: allowed, logger: logger)
        let requested = options.userVerification ?? .preferred
        // What key choice assumes; the chosen key's is decided below.
        let assumedVerification = largeBlob?.verification(requested) ?? requested
        // authkeyd's `userPresence: false`: no touch (OpenSSH's
        // no-touch-required keys), so no touch cue either.
        let presence = options.userPresence ?? true
        let requirements = KeyRequirements(
            u2fRefusal: U2FOnlyKey.refusal(allowList: allowed, verification: assumedVerification, presence: presence),
            holding: (rpID, allowed))
        let wantsBlob = options.extensions?.getCredBlob == true
        let secretPlan = try HMACSecretPlan.from(options.extensions, allowList: allowed)
        if !presence && secretPlan != nil {
            // Refused here, with the reason: the virtual key refuses
            // hmac-secret with up=false (CTAP2_ERR_UNSUPPORTED_OPTION), which
            // would reach the caller as a bare device error.
            throw RPCError(.unsupported, "authenticating: userPresence false: the daemon asks a key for hmac-secret (prf, hmacGetSecret) only with a touch; ask for one of the two")
        }
        let info = OperationInfo(type: .authentication, rpId: rpID, request: id.json, origin: origin)
        let timeout = requestTimeout(hint: options.timeout)
        try mayActFor(options.onBehalfOf, session: session)
        return try start(Method.getCredential, id: id, session: session, timeout: timeout) { [self] inFlight throws(RPCError) in
            // The user acted for is looked up off the broker's queue.
            let uid = try await owner(actingFor: options.onBehalfOf, session: session, method: "credentials.get at \(rpID)")
            let operation = Operation(id: id, session: session, request: inFlight, info: info, owner: uid)
            await operation.wakeAgent(in: self)
            let key = try await operation.chooseKey(named: options.authenticator, meeting: requirements, in: self)
            try largeBlob?.check(key)
            let verification = largeBlob?.verification(requested, on: key) ?? requested

            // The user confirms before anything is signed; the details go
            // into clientDataJSON, so the signature covers what they saw.
            if let transaction = options.transaction {
                _ = try await operation.prompt(
                    .confirmTransaction(ConfirmTransactionPrompt(operation: info, transaction: transaction)), in: self)
            }
            let clientData = try ClientDataInput.from(
                type: "webauthn.get", challenge: options.challenge, clientDataHash: options.clientDataHash,
                origin: origin, transaction: options.transaction)
            var request = GetAssertionRequest(relyingPartyID: rpID, clientData: .hash(clientData.hash))
            request.allowList = allowed
            request.credentialBlob = wantsBlob
            request.largeBlobKey = largeBlob != nil
            if !presence { request.userPresence = .disabled }
            let hmacSecret = await operation.hmacSecretAttempt(secretPlan, request, on: key, in: self)
            let base = U2FOnlyKey.fitted(hmacSecret.request, to: key)

            var statements = try await operation.withKey(key, in: self) { () async throws(RPCError) in
                try await operation.withUserVerification(
                    on: key, preference: verification, activity: "authenticating", touchCue: presence, in: self
                ) { device, method throws(FIDO2Error) in
                    var attempt = base
                    if case .builtIn = method { attempt.userVerification = .enabled }
                    var statements = try device.getAssertion(attempt, pin: method.pin).statements
                    // Each account the chooser may offer, while the key is held.
                    for index in statements.indices {
                        largeBlob?.run(on: device, statement: &statements[index], pin: method.pin)
                    }
                    return statements
                }
            }
            // The accounts not chosen carry hmac-secret outputs of their own.
            defer { for index in statements.indices { zeroSecret(&statements[index].hmacSecret) } }
            var statement = try await operation.chooseCredential(from: statements, on: key, in: self)
            operation.sendStatus(.processing, key: key, in: self)
            let registration = await store?.recordUse(
                id: Base64URL.encode(statement.credentialID), signCount: statement.signCount, at: Int64(time(nil)), for: uid)
            var extensionResults = hmacSecret.results(taking: &statement)
            if wantsBlob && !key.info.isU2FOnly { extensionResults["getCredBlob"] = .string(Base64URL.encode(statement.credentialBlob)) }
            if let largeBlob { extensionResults["largeBlob"] = largeBlob.results(for: statement.credentialID) }
            return encode(CredentialResult(
                credential: CredentialJSON.assertion(statement, clientData: clientData, extensionResults: extensionResults),
                registration: registration, clientDataHash: Base64URLBytes(clientData.hash)))
        }
    }
}
