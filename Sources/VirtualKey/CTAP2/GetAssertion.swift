import CBOR
import Crypto

/// What getNextAssertion needs to sign the rest of a getAssertion's
/// credentials (CTAP 2.1 §6.3).
struct PendingAssertions {
    var request: AssertionRequest
    var remaining: [OpenedCredential]
    var touchedAt = ContinuousClock.now
    static let timeout: Duration = .seconds(30)
}

/// The parts of a getAssertion that every statement shares.
struct AssertionRequest {
    var rpIDHash: [UInt8]
    var clientDataHash: [UInt8]
    var userPresent: Bool
    var userVerified: Bool
    var hmacSecret: HMACSecretRequest?
    var credentialBlob: Bool
    var largeBlobKey = false
}

/// authenticatorGetAssertion and authenticatorGetNextAssertion. Step
/// numbers in comments are the specification's.
extension Authenticator {
    func getAssertion(_ parameters: Parameters, context: CommandContext) throws(CTAP2Status) -> CBORMap {
        let rpID = try parameters.required(try parameters.text(0x01))
        let clientDataHash = try parameters.required(try parameters.bytes(0x02))
        let allowList = try credentialIDs(in: try parameters.array(0x03) ?? [])
        let extensions = try parameters.nestedMap(0x04) ?? [:]
        let options = try RequestOptions(try parameters.nestedMap(0x05))
        let authParameter = try parameters.bytes(0x06)

        // 1.
        if let authParameter, authParameter.isEmpty {
            try requireUserPresence(context)
            throw state.isPINSet ? .pinInvalid : .pinNotSet
        }
        // 2.
        let chosenProtocol = authParameter == nil ? nil : try authProtocol(try parameters.unsigned(0x07))
        // 4.
        var uv = authParameter == nil ? (options.uv ?? false) : false
        if uv && !isBuiltInUVConfigured { throw .invalidOption }
        if options.rk != nil { throw .unsupportedOption }
        let up = options.up ?? true
        // 5. alwaysUv applies to every assertion with a touch.
        if state.alwaysUV && up {
            if !isProtectedByUV { throw .pinUvAuthTokenRequired }
            if authParameter == nil && !uv {
                guard isBuiltInUVConfigured else { throw .pinUvAuthTokenRequired }
                uv = true
            }
        }
        // 6. User verification.
        var userVerified = false
        var fingerprintTouched = false
        if let authParameter, let chosenProtocol {
            guard isProtectedByUV else { throw .pinNotSet }
            try verifyCredentialToken(
                authParameter, over: clientDataHash, protocol: chosenProtocol, permission: .getAssertion, rpID: rpID)
            userVerified = true
        } else if uv {
            try performBuiltInUV(context, mismatch: .operationDenied)
            userVerified = true
            fingerprintTouched = true
        }

        // 7. The applicable credentials, newest first.
        let rpIDHash = SHA256.hash(Array(rpID.utf8))
        var candidates: [OpenedCredential]
        if allowList.isEmpty {
            candidates = state.residentCredentials
                .filter { $0.rpID == rpID }
                .sorted { $0.serial > $1.serial }
                .compactMap { openCredential($0.id, rpIDHash: rpIDHash) }
        } else {
            candidates = allowList.compactMap { openCredential($0, rpIDHash: rpIDHash) }
        }
        candidates.removeAll { credential in
            switch credential.sealed.protection {
            case 3: return !userVerified
            case 2: return allowList.isEmpty && !userVerified
            default: return false
            }
        }
        guard !candidates.isEmpty else { throw .noCredentials }

        // Extension inputs, checked before anyone is asked to touch.
        var hmacSecret: HMACSecretRequest?
        if let item = extensions["hmac-secret"] {
            guard up else { throw .unsupportedOption }
            hmacSecret = try HMACSecretRequest(item, keyAgreement: offeredKeyAgreement)
        }
        let wantsCredentialBlob = extensions["credBlob"]?.boolValue ?? false
        let wantsLargeBlobKey = try largeBlobKeyRequested(extensions, residentKey: true)

        // 8, 9. User presence; up=false is a silent probe.
        if up && !fingerprintTouched && !(authParameter != nil && volatile.token.userPresentFlag) {
            try requireUserPresence(context)
        }
        if authParameter != nil && up { volatile.token.spendForCredentialOperation() }

        var request = AssertionRequest(
            rpIDHash: rpIDHash, clientDataHash: clientDataHash, userPresent: up, userVerified: userVerified,
            hmacSecret: hmacSecret, credentialBlob: wantsCredentialBlob)
        request.largeBlobKey = wantsLargeBlobKey
        // 11, 12. With an allow list any match will do; without, the host
        //         walks the rest with getNextAssertion.
        var response = try assertion(for: candidates[0], request)
        if allowList.isEmpty && candidates.count > 1 {
            response[0x05] = .int(candidates.count)
            volatile.pendingAssertions = PendingAssertions(request: request, remaining: Array(candidates.dropFirst()))
        }
        return response
    }

    func getNextAssertion() throws(CTAP2Status) -> CBORMap {
        guard var pending = volatile.pendingAssertions, !pending.remaining.isEmpty,
            ContinuousClock.now - pending.touchedAt <= PendingAssertions.timeout
        else {
            volatile.pendingAssertions = nil
            throw .notAllowed
        }
        let credential = pending.remaining.removeFirst()
        pending.touchedAt = .now
        volatile.pendingAssertions = pending
        return try assertion(for: credential, pending.request)
    }

    /// Signs one assertion statement (step 13).
    private func assertion(for credential: OpenedCredential, _ request: AssertionRequest) throws(CTAP2Status) -> CBORMap {
        var extensions: CBORMap = [:]
        if let hmacSecret = request.hmacSecret, credential.sealed.hasHMACSecret {
            let credRandom = state.credRandom(credentialID: credential.id, userVerified: request.userVerified)
            extensions["hmac-secret"] = .bytes(try hmacSecret.output(credRandom: credRandom))
        }
        if request.credentialBlob { extensions["credBlob"] = .bytes(credential.sealed.credentialBlob) }
        state.signCount &+= 1
        try persist()
        let authenticatorData = AuthenticatorData(
            rpIDHash: request.rpIDHash, userPresent: request.userPresent, userVerified: request.userVerified,
            signCount: state.signCount, extensions: extensions
        ).bytes
        let signature = try CredentialKey.signature(
            for: authenticatorData + request.clientDataHash, algorithm: credential.sealed.algorithm,
            privateKey: credential.sealed.privateKey)
        var response: CBORMap = [
            0x01: .map(["id": .bytes(credential.id), "type": "public-key"]),
            0x02: .bytes(authenticatorData),
            0x03: .bytes(signature),
        ]
        // Names only after user verification: an unverified holder of the
        // key must not learn whose accounts are on it.
        if let resident = credential.resident {
            response[0x04] = UserInfo(id: resident.userID, name: resident.userName, displayName: resident.userDisplayName)
                .cbor(includingNames: request.userVerified)
        }
        if request.largeBlobKey, let resident = credential.resident, resident.hasLargeBlobKey {
            response[0x07] = .bytes(state.largeBlobKey(credentialID: credential.id))
        }
        return response
    }
}
