import AuthClient
import AuthProtocol
import CBOR
import Testing

/// What a relying party sees of a key that speaks only U2F (CTAP1), the
/// same whether the broker runs in process (AuthDaemonTests) or as
/// authkeyd (EndToEndTests, a key on a socket).
public enum U2FChecks {
    /// Registers and authenticates on `key`, each verified by py_webauthn;
    /// returns the registration's verified result.
    @discardableResult
    public static func registerAndAuthenticate(_ client: AuthClient, key: String? = nil) async throws -> JSONValue {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let challenge = randomHash()
        let created = try await client.createCredential(
            WebAuthnFixtures.createParams(challenge: challenge, authenticator: key, attestation: .direct))
        let registered = try await RelyingPartyVerifier.verifying("register", [
            "credential": created.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": "https://example.org", "rpId": "example.org",
        ]).get()
        #expect(registered["format"] == "fido-u2f")
        #expect(registered["userVerified"] == false)
        #expect(created.registration?.residentKey == false)
        #expect(created.registration?.aaguid == "00000000-0000-0000-0000-000000000000")

        // The statement is {sig, x5c}, as a browser sends fido-u2f.
        let attestationObject = try #require(
            created.credential["response"]?["attestationObject"]?.stringValue.flatMap(Base64URL.decode))
        let statement = try #require(try CBOR.decode(attestationObject).mapValue?["attStmt"]?.mapValue)
        #expect(Set(statement.keys.compactMap(\.textValue)) == ["sig", "x5c"])

        var signCount: Int64 = registered["signCount"]?.integerValue ?? 0
        for _ in 0..<2 {
            let assertionChallenge = randomHash()
            let assertion = try await client.getCredential(WebAuthnFixtures.getParams(
                challenge: assertionChallenge, allow: [registered["credentialId"]!.stringValue!], authenticator: key))
            let verified = try await RelyingPartyVerifier.verifying("authenticate", [
                "credential": assertion.credential, "challenge": .string(Base64URL.encode(assertionChallenge)),
                "origin": "https://example.org", "rpId": "example.org", "publicKey": registered["publicKey"]!,
                "signCount": .integer(signCount),
            ]).get()
            #expect(verified["userVerified"] == false)
            let newCount = try #require(verified["signCount"]?.integerValue)
            #expect(newCount > signCount, "the counter grows")
            signCount = newCount
            #expect(assertion.credential["response"]?["userHandle"] == nil, "U2F has no user handle")
            #expect(assertion.registration?.signCount == UInt32(newCount))
        }
        return registered
    }
}
