import CBOR
import Crypto
import SystemKit

/// authenticatorMakeCredential (CTAP 2.1 §6.1). Step numbers in comments
/// are the specification's.
extension Authenticator {
    func makeCredential(_ parameters: Parameters, context: CommandContext) throws(CTAP2Status) -> CBORMap {
        let clientDataHash = try parameters.required(try parameters.bytes(0x01))
        let relyingParty = try parameters.required(try parameters.nestedMap(0x02))
        guard let rpIDItem = relyingParty["id"] else { throw .missingParameter }
        guard let rpID = rpIDItem.textValue else { throw .cborUnexpectedType }
        let rpName = relyingParty["name"]?.textValue
        let user = try UserInfo(try parameters.required(parameters.item(0x03)))
        let algorithms = try parameters.required(try parameters.array(0x04))
        let excludeList = try credentialIDs(in: try parameters.array(0x05) ?? [])
        let extensions = try parameters.nestedMap(0x06) ?? [:]
        let options = try RequestOptions(try parameters.nestedMap(0x07))
        let authParameter = try parameters.bytes(0x08)

        // 1. A zero-length pinUvAuthParam asks only for a touch (libfido2's
        //    touch-to-select uses this).
        if let authParameter, authParameter.isEmpty {
            try requireUserPresence(context)
            throw state.isPINSet ? .pinInvalid : .pinNotSet
        }
        // 2.
        let chosenProtocol = authParameter == nil ? nil : try authProtocol(try parameters.unsigned(0x09))
        // 3.
        let algorithm = try chooseAlgorithm(algorithms)
        // 5.
        let residentKey = options.rk ?? false
        let uv = authParameter == nil ? (options.uv ?? false) : false
        if uv && !isBuiltInUVConfigured { throw .invalidOption }
        if options.up == false { throw .invalidOption }
        // 6. alwaysUv: no registration without verification.
        if state.alwaysUV {
            if !isProtectedByUV { throw .pinUvAuthTokenRequired }
            if authParameter == nil && !uv { throw .pinUvAuthTokenRequired }
        }
        // 7, 8. makeCredUvNotRqd (reported true unless alwaysUv): a
        //       protected key registers non-discoverable credentials
        //       without verification, discoverable ones only with it.
        if isProtectedByUV && !uv && authParameter == nil && residentKey {
            throw state.isPINSet ? .pinUvAuthTokenRequired : .operationDenied
        }
        // 9. No enterprise attestation on this key.
        if parameters.contains(0x0A) { throw .invalidParameter }
        let wantsLargeBlobKey = try largeBlobKeyRequested(extensions, residentKey: residentKey)

        // 11. User verification.
        var userVerified = false
        var fingerprintTouched = false
        if let authParameter, let chosenProtocol {
            guard isProtectedByUV else { throw .pinNotSet }
            try verifyCredentialToken(
                authParameter, over: clientDataHash, protocol: chosenProtocol, permission: .makeCredential, rpID: rpID)
            userVerified = true
        } else if uv {
            try performBuiltInUV(context, mismatch: .operationDenied)
            userVerified = true
            fingerprintTouched = true
        }

        // 12. The exclude list: refuse, after a touch, to register twice.
        let rpIDHash = SHA256.hash(Array(rpID.utf8))
        for id in excludeList {
            guard let existing = openCredential(id, rpIDHash: rpIDHash) else { continue }
            if existing.sealed.protection == 3 && !userVerified { continue }
            let alreadyPresent = authParameter != nil ? volatile.token.userPresentFlag : fingerprintTouched
            if !alreadyPresent, simulatedUser.awaitPresence(context) == .cancelled { throw .keepaliveCancel }
            throw .credentialExcluded
        }

        // 13, 14. User presence.
        if !fingerprintTouched && !(authParameter != nil && volatile.token.userPresentFlag) {
            try requireUserPresence(context)
        }
        if authParameter != nil { volatile.token.spendForCredentialOperation() }

        // 15. Extensions.
        var outputs = try MakeCredentialExtensions(extensions, rpID: rpID, state: state)
        let secretAtRegistration = try hmacSecretAtRegistration(extensions, hmacSecret: outputs.hmacSecret)

        // 16-18. The credential.
        if residentKey { try makeRoomForResidentCredential(rpID: rpID, userID: user.id) }
        let key = try CredentialKey.generate(algorithm)
        var scalar = key.rawRepresentation
        defer { zeroSecret(&scalar) }
        let credentialID = try SealedCredential(
            privateKey: scalar, algorithm: algorithm, protection: outputs.protection, isDiscoverable: residentKey,
            hasHMACSecret: outputs.hmacSecret, credentialBlob: outputs.credentialBlob
        ).seal(masterKey: state.masterKey, rpIDHash: rpIDHash)
        outputs.map = try addingHMACSecretOutput(secretAtRegistration, to: outputs.map, credentialID: credentialID, userVerified: userVerified)
        if residentKey {
            state.residentCredentials.append(
                ResidentCredential(
                    id: credentialID, rpID: rpID, rpName: rpName, userID: user.id, userName: user.name,
                    userDisplayName: user.displayName, protection: outputs.protection, serial: state.nextSerial,
                    hasLargeBlobKey: wantsLargeBlobKey))
            state.nextSerial += 1
        }
        state.signCount &+= 1
        try persist()

        let authenticatorData = AuthenticatorData(
            rpIDHash: rpIDHash, userPresent: true, userVerified: userVerified, signCount: state.signCount,
            attestedCredential: .init(aaguid: configuration.aaguid, credentialID: credentialID, publicKey: key.cosePublicKey),
            extensions: outputs.map
        ).bytes

        // 19. Attestation.
        let format = attestationFormat(preference: try parameters.array(0x0B))
        let statement = try attestationStatement(
            format, signing: authenticatorData + clientDataHash, credentialKey: key)
        var response: CBORMap = [0x01: .text(format == .none ? "none" : "packed"), 0x02: .bytes(authenticatorData), 0x03: statement]
        // CTAP 2.1 §12.3: in the response map, not in authenticator data.
        if wantsLargeBlobKey { response[0x05] = .bytes(state.largeBlobKey(credentialID: credentialID)) }
        return response
    }

    /// A discoverable credential replaces one for the same account; a full
    /// key refuses a new one.
    private func makeRoomForResidentCredential(rpID: String, userID: [UInt8]) throws(CTAP2Status) {
        state.residentCredentials.removeAll { $0.rpID == rpID && $0.userID == userID }
        guard state.residentCredentials.count < configuration.residentCredentialCapacity else { throw .keyStoreFull }
    }

    /// The attestation format to use: the configured one, unless the host
    /// stated a preference (CTAP 2.2 attestationFormatsPreference, 0x0B).
    private func attestationFormat(preference: [CBOR]?) -> AttestationMode {
        for name in preference?.compactMap(\.textValue) ?? [] {
            if name == "none" { return .none }
            if name == "packed" { return configuration.attestation == .none ? .packed : configuration.attestation }
        }
        return configuration.attestation
    }

    /// The attStmt map: packed with the attestation certificate chain,
    /// packed self-attestation, or none (WebAuthn §8.2, §8.7).
    private func attestationStatement(
        _ format: AttestationMode, signing message: [UInt8], credentialKey: CredentialKey
    ) throws(CTAP2Status) -> CBOR {
        do {
            switch format {
            case .none:
                return .map([:])
            case .selfAttestation:
                let alg = CBOR.int(credentialKey.algorithm.rawValue)
                return .map(["alg": alg, "sig": .bytes(try credentialKey.signature(for: message))])
            case .packed:
                let attestationKey = try P256.PrivateKey(rawRepresentation: state.attestation.privateKey)
                return .map([
                    "alg": -7, "sig": .bytes(try attestationKey.signature(for: message)),
                    "x5c": [.bytes(state.attestation.certificate), .bytes(state.attestation.caCertificate)],
                ])
            }
        } catch {
            throw .other
        }
    }
}

/// The makeCredential and getAssertion options map: rk, up, uv.
struct RequestOptions {
    var rk: Bool?
    var up: Bool?
    var uv: Bool?

    init(_ map: CBORMap?) throws(CTAP2Status) {
        func value(_ name: String) throws(CTAP2Status) -> Bool? {
            guard let item = map?[name] else { return nil }
            guard let flag = item.boolValue else { throw .cborUnexpectedType }
            return flag
        }
        rk = try value("rk")
        up = try value("up")
        uv = try value("uv")
    }
}

/// A credential id this key issued for the relying party, with its stored
/// record if it is discoverable.
struct OpenedCredential {
    var id: [UInt8]
    var sealed: SealedCredential
    var resident: ResidentCredential?
}

extension Authenticator {
    /// Opens a credential id; nil when another key (or this key before a
    /// reset) made it, when it is for another relying party, or when it was
    /// a discoverable credential that has since been deleted.
    func openCredential(_ id: [UInt8], rpIDHash: [UInt8]) -> OpenedCredential? {
        guard let sealed = SealedCredential.open(id, masterKey: state.masterKey, rpIDHash: rpIDHash) else { return nil }
        guard sealed.isDiscoverable else { return OpenedCredential(id: id, sealed: sealed, resident: nil) }
        guard let record = state.residentCredentials.first(where: { $0.id == id }) else { return nil }
        return OpenedCredential(id: id, sealed: sealed, resident: record)
    }

    /// Checks the pinUvAuthParam of a makeCredential or getAssertion: a live
    /// token with the permission, bound to this relying party (binding it
    /// now if it was not), still vouching for user verification.
    func verifyCredentialToken(
        _ parameter: [UInt8], over clientDataHash: [UInt8], protocol chosen: PINUVAuthProtocol,
        permission: TokenPermissions, rpID: String
    ) throws(CTAP2Status) {
        guard volatile.token.verify(clientDataHash, signature: parameter, protocol: chosen),
            volatile.token.permissions.contains(permission),
            volatile.token.permissionsRPID == nil || volatile.token.permissionsRPID == rpID,
            volatile.token.userVerifiedFlag
        else { throw .pinAuthInvalid }
        if volatile.token.permissionsRPID == nil { volatile.token.permissionsRPID = rpID }
    }
}
