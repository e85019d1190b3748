import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
import Testing

/// WebAuthn's largeBlob extension through the broker in process (moved from
/// EndToEndTests, which keeps the key on a socket read back by python-fido2
/// and the reason in authkeyd's log): which key a `support` chooses, and a
/// write a fingerprint verifies. Every result is checked by py_webauthn.
@Suite(.timeLimit(.minutes(2))) struct LargeBlobExtensionTests {
    @Test func requiredSupportChoosesAKeyThatHasIt() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=Plain Key,largeblobs=off", "--virtual-key", "name=Blob Key",
        ])
        let keys = try await daemon.listKeys()
        let client = try daemon.client()
        // Only one key qualifies: no selectAuthenticator prompt is needed.
        let ui = ScriptedUI()
        client.setUI(ui)
        let made = try await LargeBlobChecks.register(client, user: "alice")
        #expect(made.result == ["supported": true])
        #expect(!ui.prompts.contains("select"), "prompts: \(ui.prompts)")
        // That key has no PIN: a write, which needs verification, cannot be done.
        await LargeBlobChecks.expectError(.unsupported, containing: "set a PIN first") {
            try await LargeBlobChecks.authenticate(client, credential: (made.id, made.publicKey), LargeBlobInputs(write: Base64URLBytes([1])))
        }

        let plain = try #require(keys.first { $0.product == "Plain Key" }?.id)
        await LargeBlobChecks.expectError(.unsupported, containing: "does not store large blobs") {
            try await LargeBlobChecks.register(client, user: "bob", authenticator: plain)
        }
        let preferred = try await LargeBlobChecks.register(client, user: "carol", support: "preferred", authenticator: plain)
        #expect(preferred.result == ["supported": false])
    }

    @Test func withAFingerprintTheWriteNeedsNoPIN() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let state = try KeyHandshakeTests().keyWithFingerprint(in: directory)
        let daemon = try await InProcessBroker(["--virtual-key", "name=Bio,state=\(state)"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: [])
        client.setUI(ui)
        let made = try await LargeBlobChecks.register(client, user: "alice")
        let credential = (made.id, made.publicKey)
        #expect(try await LargeBlobChecks.authenticate(client, credential: credential, LargeBlobInputs(write: Base64URLBytes([1, 2, 3])), userVerified: true)
            == ["written": true])
        #expect(try await LargeBlobChecks.authenticate(client, credential: credential, LargeBlobInputs(read: true)) == ["blob": "AQID"])
        #expect(ui.pinRequests.isEmpty, "the sensor verified both the assertion and the write")
    }

    @Test func requiredFailsWhenNoKeyHasIt() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Plain Key,largeblobs=off"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        var create = WebAuthnFixtures.createParams(residentKey: "required")
        create.extensions = CreateExtensions()
        create.extensions?.largeBlob = LargeBlobInputs(support: "required")
        await LargeBlobChecks.expectError(.unsupported, containing: "no key present stores large blobs") {
            try await client.createCredential(create)
        }
    }
}
