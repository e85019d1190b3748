import AuthProtocol
import CBOR
import FIDO2

/// The WebAuthn `PublicKeyCredential` JSON (Level 3 `toJSON()`) that a
/// relying-party library verifies as it is.
enum CredentialJSON {
    /// `RegistrationResponseJSON`. With attestation conveyance `none` (the
    /// WebAuthn default), the statement is replaced by `none` and the AAGUID
    /// zeroed, as browsers do.
    static func registration(
        _ credential: Credential, clientData: ClientDataInput, conveyance: AttestationConveyance, transports: [AuthenticatorTransport],
        extensionResults: JSONObject, logger: Logger
    ) -> JSONValue {
        var authenticatorData = credential.authenticatorData
        let (format, statement, anonymous) = attestation(
            format: credential.format, statement: credential.attestationStatementCBOR, conveyance: conveyance, logger: logger)
        if anonymous {
            // rpIdHash(32) flags(1) signCount(4), then the AAGUID.
            if authenticatorData.count >= 53 { authenticatorData.replaceSubrange(37..<53, with: [UInt8](repeating: 0, count: 16)) }
        }
        let attestationObject = CBOR.map(["fmt": .text(format), "attStmt": statement, "authData": .bytes(authenticatorData)]).encoded()
        var response: JSONObject = [
            "attestationObject": .string(Base64URL.encode(attestationObject)),
            "authenticatorData": .string(Base64URL.encode(authenticatorData)),
            "transports": .array(transports.map { .string($0.rawValue) }),
            "publicKeyAlgorithm": .integer(Int64(credential.algorithm)),
        ]
        if let clientDataJSON = clientData.json { response["clientDataJSON"] = .string(Base64URL.encode(clientDataJSON)) }
        if let publicKey = credential.subjectPublicKeyInfo { response["publicKey"] = .string(Base64URL.encode(publicKey)) }
        let id = Base64URL.encode(credential.credentialID)
        return [
            "id": .string(id), "rawId": .string(id), "type": "public-key", "authenticatorAttachment": .string(AuthenticatorAttachment.crossPlatform.rawValue),
            "response": .object(response), "clientExtensionResults": .object(extensionResults),
        ]
    }

    /// The attestation a registration returns: the key's format and
    /// statement, or `none` (`anonymous`: the AAGUID is zeroed too) when
    /// the caller asked for none, or when the key's statement cannot be
    /// decoded. That last is logged: a format with an empty statement
    /// (what authkeyd once sent) fails every relying party's verification
    /// as if the key were forged, while `none` is what WebAuthn lets a
    /// client send in place of any attestation (§5.1.3, "attestation
    /// conveyance"), and the credential itself is sound.
    static func attestation(
        format: String, statement bytes: [UInt8], conveyance: AttestationConveyance, logger: Logger
    ) -> (format: String, statement: CBOR, anonymous: Bool) {
        let none = (format: "none", statement: CBOR.map([:]), anonymous: true)
        if conveyance == .none { return none }
        let statement: CBOR
        do throws(CBORDecodingError) { statement = try CBOR.decode(bytes) } catch {
            logger.error("the key's attestation statement (format \(format), \(bytes.count) bytes) cannot be decoded (\(error)); the registration is returned with attestation none")
            return none
        }
        guard var members = statement.mapValue else {
            logger.error("the key's attestation statement (format \(format)) is not a CBOR map; the registration is returned with attestation none")
            return none
        }
        // fido-u2f's statement is {sig, x5c} (WebAuthn §8.6), as browsers
        // send it; libfido2's U2F path adds an alg.
        if format == "fido-u2f" { members["alg"] = nil }
        return (format, .map(members), false)
    }

    /// `AuthenticationResponseJSON`.
    static func assertion(_ statement: AssertionStatement, clientData: ClientDataInput, extensionResults: JSONObject) -> JSONValue {
        var response: JSONObject = [
            "authenticatorData": .string(Base64URL.encode(statement.authenticatorData)),
            "signature": .string(Base64URL.encode(statement.signature)),
        ]
        if let clientDataJSON = clientData.json { response["clientDataJSON"] = .string(Base64URL.encode(clientDataJSON)) }
        if !statement.userID.isEmpty { response["userHandle"] = .string(Base64URL.encode(statement.userID)) }
        let id = Base64URL.encode(statement.credentialID)
        return [
            "id": .string(id), "rawId": .string(id), "type": "public-key", "authenticatorAttachment": .string(AuthenticatorAttachment.crossPlatform.rawValue),
            "response": .object(response), "clientExtensionResults": .object(extensionResults),
        ]
    }
}
