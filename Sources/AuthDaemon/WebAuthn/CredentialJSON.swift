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
        _ credential: Credential, clientData: ClientDataInput, conveyance: String, transports: [String],
        extensionResults: JSONObject
    ) -> JSONValue {
        var authenticatorData = credential.authenticatorData
        var format = credential.format
        var statement: CBOR = (try? CBOR.decode(credential.attestationStatementCBOR)) ?? .map([:])
        // fido-u2f's statement is {sig, x5c} (WebAuthn §8.6), as browsers
        // send it; libfido2's U2F path adds an alg.
        if format == "fido-u2f", var members = statement.mapValue {
            members["alg"] = nil
            statement = .map(members)
        }
        if conveyance == "none" || conveyance.isEmpty {
            format = "none"
            statement = .map([:])
            // rpIdHash(32) flags(1) signCount(4), then the AAGUID.
            if authenticatorData.count >= 53 { authenticatorData.replaceSubrange(37..<53, with: [UInt8](repeating: 0, count: 16)) }
        }
        let attestationObject = CBOR.map(["fmt": .text(format), "attStmt": statement, "authData": .bytes(authenticatorData)]).encoded()
        var response: JSONObject = [
            "attestationObject": .string(Base64URL.encode(attestationObject)),
            "authenticatorData": .string(Base64URL.encode(authenticatorData)),
            "transports": .array(transports.map(JSONValue.string)),
            "publicKeyAlgorithm": .integer(Int64(credential.algorithm)),
        ]
        if let clientDataJSON = clientData.json { response["clientDataJSON"] = .string(Base64URL.encode(clientDataJSON)) }
        if let publicKey = credential.subjectPublicKeyInfo { response["publicKey"] = .string(Base64URL.encode(publicKey)) }
        let id = Base64URL.encode(credential.credentialID)
        return [
            "id": .string(id), "rawId": .string(id), "type": "public-key", "authenticatorAttachment": "cross-platform",
            "response": .object(response), "clientExtensionResults": .object(extensionResults),
        ]
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
            "id": .string(id), "rawId": .string(id), "type": "public-key", "authenticatorAttachment": "cross-platform",
            "response": .object(response), "clientExtensionResults": .object(extensionResults),
        ]
    }
}
