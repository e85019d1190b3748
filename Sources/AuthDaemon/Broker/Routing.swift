import AuthProtocol
import FIDO2

extension Broker {
    /// The methods clients may call, and the right each needs. The switch
    /// covers every `ClientMethod` and has no `default`, so a method added
    /// to the list without a handler does not compile.
    func route(_ name: String, id: RPCID, params: JSONValue?, session: Session) throws(RPCError) -> Handling {
        guard let method = ClientMethod(rawValue: name) else {
            throw RPCError(.methodNotFound, "no method \"\(name)\" (see authkeyd-protocol(7))")
        }
        if method.needsAdminRight { try requireManagementRight(session) }
        switch method {
        case .hello: return .done(try hello(params, session: session))
        case .listAuthenticators: return .doneSerialized(keyList())
        case .authenticatorInfo: return .done(try authenticatorInfo(params))
        case .watchAuthenticators:
            session.watching = true
            return .doneSerialized(keyList())
        case .selectAuthenticator: return try selectByTouch(params, id: id, session: session)
        case .cancelOperation: return .done(try cancelOperation(params, session: session))
        case .createCredential: return try createCredential(params, id: id, session: session)
        case .getCredential: return try getCredential(params, id: id, session: session)
        case .listRegistrations: return try registrations(.list, params: params, id: id, session: session)
        case .renameRegistration: return try registrations(.rename, params: params, id: id, session: session)
        case .deleteRegistration: return try registrations(.delete, params: params, id: id, session: session)
        case .registerAgent: return .done(try registerAgent(params, session: session))
        case .unregisterAgent: return .done(unregisterAgent(session))
        case .setPin: return try setPIN(params, id: id, session: session)
        case .changePin: return try changePIN(params, id: id, session: session)
        case .pinRetries: return try pinRetries(params, id: id, session: session)
        case .reset: return try resetKey(params, id: id, session: session)
        case .listCredentials: return try listStoredCredentials(params, id: id, session: session)
        case .deleteCredential: return try deleteStoredCredential(params, id: id, session: session)
        case .updateCredentialUser: return try updateStoredCredentialUser(params, id: id, session: session)
        case .fingerprintSensor: return try fingerprintSensor(params, id: id, session: session)
        case .enrollFingerprint: return try enrollFingerprint(params, id: id, session: session)
        case .listFingerprints: return try listFingerprints(params, id: id, session: session)
        case .renameFingerprint: return try renameFingerprint(params, id: id, session: session)
        case .deleteFingerprint: return try deleteFingerprint(params, id: id, session: session)
        case .setAlwaysUv: return try setAlwaysUV(params, id: id, session: session)
        case .setMinPinLength: return try setMinimumPINLength(params, id: id, session: session)
        }
    }

    /// The methods `hello` advertises: every one but itself.
    static let capabilities = Method.clientMethods.filter { $0 != Method.hello }

    private func hello(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let hello = try decode(HelloParams.self, params)
        if let requested = hello.protocol, requested != protocolVersion {
            throw RPCError(.unsupported, "protocol \(requested) is not supported; this daemon speaks protocol \(protocolVersion)")
        }
        if let ui = hello.ui { session.answeredPrompts = try answeredPrompts(ui) }
        session.clientName = hello.client
        return encode(HelloResult(
            protocol: protocolVersion, daemon: "authkeyd/\(DaemonConfiguration.version)", capabilities: Self.capabilities,
            uid: Int(session.peer.uid), canManage: session.rights.contains(.manage)))
    }

    /// The key a request names, or `noAuthenticator`.
    func requireKey(_ id: String) throws(RPCError) -> RegisteredKey {
        guard let key = keys[id] else {
            throw RPCError(.noAuthenticator, "no authenticator \"\(id)\" (authenticators.list shows the present ones)")
        }
        return key
    }

    /// `authenticators.info`: what the key said at bring-up and since
    /// (`KeySnapshot`); the key is not opened for it.
    private func authenticatorInfo(_ params: JSONValue?) throws(RPCError) -> JSONValue {
        let key = try requireKey(try decode(AuthenticatorParams.self, params).authenticator)
        return encode(AuthenticatorDetails(authenticator: wire(key), info: key.wireInfo()))
    }

    private func cancelOperation(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let target = try decode(CancelParams.self, params)
        guard let id = RPCID(json: target.id) else {
            throw RPCError(.invalidParams, "invalid params: id: expected a string or a number")
        }
        // Only the client's own requests: another client's ids are not even seen.
        guard let request = session.inFlight[id] else { return ["cancelled": false] }
        request.cancel(RPCError(.cancelled, "cancelled by the client"))
        return ["cancelled": true]
    }
}
