import AuthProtocol
import FIDO2

/// What a `credentials.create` asks of a key, in CTAP terms: WebAuthn's
/// options mapped onto libfido2's request.
struct RegistrationPlan: Sendable {
    let base: MakeCredentialRequest
    /// WebAuthn's residentKey.
    let residentKey: ResidentKeyRequirement
    let verification: UserVerificationRequirement
    let wantsCredProperties: Bool
    let wantsHMACSecret: Bool
    let wantsPRF: Bool
    let wantsCredentialBlob: Bool
    /// WebAuthn's largeBlob, if asked for.
    let largeBlob: LargeBlobSupport?

    init(_ options: CreateParams, rpID: String, clientData: ClientDataInput) throws(RPCError) {
        var request = MakeCredentialRequest(
            clientData: .hash(clientData.hash), relyingParty: RelyingParty(id: rpID, name: options.rp.name),
            user: UserEntity(id: options.user.id.bytes, name: options.user.name, displayName: options.user.displayName))
        request.excludeList = (options.excludeCredentials ?? []).filter { $0.type == "public-key" }.map(\.id.bytes)
        let selection = options.authenticatorSelection
        residentKey = selection?.residentKey ?? (selection?.requireResidentKey == true ? .required : .discouraged)
        verification = selection?.userVerification ?? .preferred
        let extensions = options.extensions
        wantsCredProperties = extensions?.credProps == true
        wantsHMACSecret = extensions?.hmacCreateSecret == true
        wantsPRF = try HMACSecretPlan.wantedAtRegistration(extensions?.prf)
        request.hmacSecret = wantsHMACSecret || wantsPRF
        if let policy = extensions?.credentialProtectionPolicy {
            switch policy {
            case "userVerificationOptional": request.credentialProtection = .userVerificationOptional
            case "userVerificationOptionalWithCredentialIDList":
                request.credentialProtection = .userVerificationOptionalWithCredentialIDList
            case "userVerificationRequired": request.credentialProtection = .userVerificationRequired
            default:
                throw RPCError(.invalidParams, "invalid params: extensions.credentialProtectionPolicy: unknown policy \"\(policy)\"")
            }
        }
        if let blob = extensions?.credBlob {
            guard blob.bytes.count <= 32 else { throw RPCError(.invalidParams, "invalid params: extensions.credBlob: 32 bytes at most") }
            request.credentialBlob = blob.bytes
        }
        wantsCredentialBlob = extensions?.credBlob != nil
        request.minPINLength = extensions?.minPinLength == true
        largeBlob = try LargeBlobSupport(extensions?.largeBlob, residentKey: residentKey)
        base = request
    }

    /// The request for a particular key: `preferred` resident keys where
    /// the key can make them.
    func fidoRequest(residentKeySupported: Bool) -> MakeCredentialRequest {
        var request = base
        switch residentKey {
        case .required: request.residentKey = .enabled
        case .preferred: request.residentKey = residentKeySupported ? .enabled : .keyDefault
        case .discouraged: request.residentKey = .keyDefault
        }
        // Keys make largeBlobKeys only for discoverable credentials.
        request.largeBlobKey = largeBlob != nil && request.residentKey == .enabled
        return request
    }

    /// `clientExtensionResults` for the credential made.
    func extensionResults(for credential: Credential, request: MakeCredentialRequest) -> JSONObject {
        var results: JSONObject = [:]
        let outputs = (try? ParsedAuthenticatorData(credential.authenticatorData))?.extensions ?? [:]
        if wantsCredProperties { results["credProps"] = ["rk": .bool(request.residentKey == .enabled)] }
        if wantsHMACSecret { results["hmacCreateSecret"] = .bool(outputs["hmac-secret"]?.boolValue == true) }
        if wantsPRF { results["prf"] = ["enabled": .bool(outputs["hmac-secret"]?.boolValue == true)] }
        if wantsCredentialBlob { results["credBlob"] = .bool(outputs["credBlob"]?.boolValue == true) }
        if largeBlob != nil { results["largeBlob"] = LargeBlobSupport.results(for: credential) }
        return results
    }
}

extension MakeCredentialRequest {
    /// The request as one attempt sends it: the sensor asked for UV
    /// explicitly; a PIN makes libfido2 fetch a token instead.
    func with(_ method: VerificationMethod) -> MakeCredentialRequest {
        var request = self
        if case .builtIn = method { request.userVerification = .enabled }
        return request
    }
}
