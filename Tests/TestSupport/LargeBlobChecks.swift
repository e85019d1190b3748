import AuthClient
import AuthProtocol
import Testing

/// WebAuthn's largeBlob extension as a relying party uses it, every result
/// checked by py_webauthn: for the broker in process (AuthDaemonTests) and
/// authkeyd (EndToEndTests) alike.
public enum LargeBlobChecks {
    public static let origin = "https://example.org"

    /// Registers a discoverable credential with `largeBlob: {support}`,
    /// verified by py_webauthn; its id, public key and the extension result.
    public static func register(
        _ client: AuthClient, user: String, support: String = "required", authenticator: String? = nil
    ) async throws -> (id: String, publicKey: JSONValue, result: JSONValue?) {
        let challenge = randomHash()
        var params = WebAuthnFixtures.createParams(
            user: user, userID: Array("user-\(user)".utf8), challenge: challenge, residentKey: .required,
            authenticator: authenticator)
        params.extensions = CreateExtensions()
        params.extensions?.largeBlob = LargeBlobInputs(support: support)
        let created = try await client.createCredential(params)
        let registered = try await RelyingPartyVerifier.verifying("register", [
            "credential": created.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": .string(origin), "rpId": "example.org",
        ]).get()
        return (
            try #require(registered["credentialId"]?.stringValue), try #require(registered["publicKey"]),
            created.credential["clientExtensionResults"]?["largeBlob"]
        )
    }

    /// An authentication with `largeBlob` inputs (and `userVerification`,
    /// where given), verified by py_webauthn, which requires the UV flag
    /// with `userVerified`; `clientExtensionResults.largeBlob`.
    public static func authenticate(
        _ client: AuthClient, credential: (id: String, publicKey: JSONValue), _ inputs: LargeBlobInputs,
        userVerification: UserVerificationRequirement? = nil, userVerified: Bool = false
    ) async throws -> JSONValue? {
        let challenge = randomHash()
        var params = WebAuthnFixtures.getParams(challenge: challenge, allow: [credential.id], userVerification: userVerification)
        params.extensions = GetExtensions()
        params.extensions?.largeBlob = inputs
        let assertion = try await client.getCredential(params)
        let verified = try await RelyingPartyVerifier.verifying("authenticate", [
            "credential": assertion.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": .string(origin), "rpId": "example.org", "publicKey": credential.publicKey,
            "requireUserVerification": .bool(userVerified),
        ]).get()
        #expect(verified["signCount"] != nil)
        return assertion.credential["clientExtensionResults"]?["largeBlob"]
    }

    /// Expects the daemon's error with `reason`, its message containing `text`.
    public static func expectError<T>(
        _ reason: ErrorReason, containing text: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ call: () async throws -> T
    ) async {
        await expectReason(reason, containing: text, sourceLocation: sourceLocation, call)
    }
}
