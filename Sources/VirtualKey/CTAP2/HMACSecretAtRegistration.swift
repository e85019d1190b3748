import CBOR

/// CTAP 2.2's hmac-secret-mc: the hmac-secret outputs for one or two salts
/// returned by makeCredential itself, so that a WebAuthn client's PRF
/// `eval` at registration gets `prf.results` without a second touch. The
/// input is hmac-secret's own (keyAgreement, saltEnc, saltAuth, protocol);
/// the outputs are those a later getAssertion with the same salts and the
/// same user verification gives.
extension Authenticator {
    /// The checked, decrypted input; nil when the request has none, or
    /// does not also ask for hmac-secret (a credential without it has no
    /// secret to derive from).
    func hmacSecretAtRegistration(_ extensions: CBORMap, hmacSecret: Bool) throws(CTAP2Status) -> HMACSecretRequest? {
        guard let item = extensions["hmac-secret-mc"], hmacSecret else { return nil }
        return try HMACSecretRequest(item, keyAgreement: offeredKeyAgreement)
    }

    /// The authenticator-data extension outputs with hmac-secret-mc's, when asked.
    func addingHMACSecretOutput(
        _ request: HMACSecretRequest?, to outputs: CBORMap, credentialID: [UInt8], userVerified: Bool
    ) throws(CTAP2Status) -> CBORMap {
        guard let request else { return outputs }
        var outputs = outputs
        let credRandom = state.credRandom(credentialID: credentialID, userVerified: userVerified)
        outputs["hmac-secret-mc"] = .bytes(try request.output(credRandom: credRandom))
        return outputs
    }
}
