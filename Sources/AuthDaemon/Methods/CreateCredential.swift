import AuthProtocol
import FIDO2
import Glibc

extension Broker {
    /// `credentials.create`: WebAuthn registration through the handshake —
    /// choose a key, verify the user (fingerprint or PIN), touch, then name
    /// the key (`ui.describeAuthenticator`).
    ///
    /// Cancelling `ui.describeAuthenticator` does not undo the registration:
    /// the credential already exists on the key, and an error here would
    /// leave the relying party without the credential the user made. It is
    /// recorded unnamed, and the result is returned as usual.
    func createCredential(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let options = try decode(CreateParams.self, params)
        guard (1...64).contains(options.user.id.bytes.count) else {
            throw RPCError(.invalidParams, "invalid params: user.id: 1 to 64 bytes")
        }
        let algorithms = try AlgorithmChoice(options.pubKeyCredParams)
        let (rpID, origin) = try OriginCheck.resolve(rpID: options.rp.id, origin: options.origin)
        let clientData = try ClientDataInput.from(
            type: "webauthn.create", challenge: options.challenge, clientDataHash: options.clientDataHash, origin: origin,
            transaction: nil)
        let request = try RegistrationPlan(options, rpID: rpID, clientData: clientData)
        let requirements = KeyRequirements(
            u2fRefusal: U2FOnlyKey.refusal(of: request, extensions: options.extensions), largeBlob: request.largeBlob,
            algorithms: algorithms)
        let info = OperationInfo(
            type: .registration, rpId: rpID, rpName: options.rp.name, userName: options.user.name,
            userDisplayName: options.user.displayName, request: id.json, origin: origin)
        let timeout = requestTimeout(hint: options.timeout)
        return try start(Method.createCredential, id: id, session: session, timeout: timeout) { [self] inFlight throws(RPCError) in
            let operation = Operation(id: id, session: session, request: inFlight, info: info)
            await operation.wakeAgent(in: self)
            let key = try await operation.chooseKey(named: options.authenticator, meeting: requirements, in: self)
            // `requirements` made sure that the key signs with one of the algorithms.
            guard let algorithm = algorithms.algorithm(for: key.info) else { throw algorithms.unsupported(by: [key]) }
            let fido = U2FOnlyKey.fitted(
                request.fidoRequest(residentKeySupported: key.info.supports.residentKeys).signing(with: algorithm), to: key)
            let credential = try await operation.withKey(key, in: self) { () async throws(RPCError) in
                let credential = try await operation.withUserVerification(
                    on: key, preference: request.verification, activity: "registering", in: self
                ) { device, method throws(FIDO2Error) in
                    try device.makeCredential(fido.with(method), pin: method.pin)
                }
                // A discoverable credential takes a place on the key
                // (getInfo's remainingDiscoverableCredentials).
                if fido.residentKey == .enabled { await operation.refresh(key, in: self) }
                return credential
            }
            operation.sendStatus(.processing, key: key, in: self)
            let friendlyName = await operation.askForName(of: key, credentialID: credential.credentialID, in: self)
            let registration = await record(
                credential, options: options, rpID: rpID, key: key, friendlyName: friendlyName,
                residentKey: fido.residentKey == .enabled, for: session.peer.uid)
            return encode(CredentialResult(
                credential: CredentialJSON.registration(
                    credential, clientData: clientData, conveyance: options.attestation ?? AttestationConveyance.none,
                    transports: key.info.transports.compactMap(AuthenticatorTransport.init(rawValue:)), extensionResults: request.extensionResults(for: credential, request: fido),
                    logger: logger),
                registration: registration, clientDataHash: Base64URLBytes(clientData.hash)))
        }
    }

    /// Writes the registration record, and waits for it to be on disk;
    /// the credential exists whatever happens here, so a store that fails
    /// is logged, not fatal.
    private func record(
        _ credential: Credential, options: CreateParams, rpID: String, key: RegisteredKey, friendlyName: String?,
        residentKey: Bool, for uid: uid_t
    ) async -> Registration? {
        let registration = Registration(
            id: Base64URL.encode(credential.credentialID), rpId: rpID, rpName: options.rp.name, user: options.user,
            aaguid: uuidString(credential.aaguid), authenticatorProduct: key.product, transport: key.transport,
            friendlyName: friendlyName, residentKey: residentKey, createdAt: Int64(time(nil)),
            lastUsedAt: nil, signCount: credential.signCount, publicKeyAlgorithm: Int(credential.algorithm))
        guard let store else { return nil }
        do {
            try await store.add(registration, for: uid)
            return registration
        } catch {
            logger.error("cannot record a registration for uid \(uid): \(error)")
            return nil
        }
    }

    /// The time a request may take: the client's hint within the configured limit.
    func requestTimeout(hint milliseconds: Int?) -> Duration {
        guard let milliseconds, milliseconds > 0 else { return configuration.requestTimeout }
        return min(.milliseconds(milliseconds), configuration.requestTimeout)
    }
}

extension Operation {
    /// `ui.describeAuthenticator`: the name the user gives the key, or the
    /// one it had; nil when the user declines and the key had none.
    fileprivate func askForName(of key: RegisteredKey, credentialID: [UInt8], in broker: isolated Broker) async -> String? {
        let current = broker.keys.name(of: key)
        let prompt = DescribeAuthenticatorPrompt(
            operation: info, authenticator: broker.wire(key), credentialId: Base64URL.encode(credentialID),
            suggestion: current ?? key.product)
        guard let reply = try? await self.prompt(.describeAuthenticator(prompt), in: broker),
            let name = reply.friendlyName?.trimmingWhitespace(), !name.isEmpty
        else { return current }
        let bounded = String(name.prefix(128))
        if broker.keys.setName(bounded, of: key) {
            broker.notifyWatchers(Method.authenticatorChanged, AuthenticatorEvent(authenticator: broker.wire(key)))
        }
        return bounded
    }
}

extension VerificationMethod {
    var pin: PIN? {
        if case .pin(let pin) = self { return pin }
        return nil
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
