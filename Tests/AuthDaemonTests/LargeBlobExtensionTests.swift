import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
import Testing

/// WebAuthn's largeBlob extension through the broker in process (moved from
/// EndToEndTests, which keeps the key on a socket read back by python-fido2
/// and the reason in authkeyd's log): which key a `support` chooses, a
/// write a fingerprint verifies, one a PIN does, and one a key with neither
/// takes without verification. Every result is checked by py_webauthn.
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
        // That key has neither PIN nor fingerprint: it takes a write without verification.
        #expect(try await LargeBlobChecks.authenticate(client, credential: (made.id, made.publicKey), LargeBlobInputs(write: Base64URLBytes([1])))
            == ["written": true])

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

    /// CTAP 2.1 §6.10.2: a key protected by no user verification takes a
    /// write without a pinUvAuthToken, so the write asks the user for
    /// nothing but the touch, and the blob reads back. A request that
    /// requires verification is still refused: the key cannot give it.
    @Test func aKeyWithNeitherPINNorFingerprintTakesTheWriteWithoutVerification() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=Bare Key,fingerprint=no"])
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        let made = try await LargeBlobChecks.register(client, user: "alice")
        let credential = (made.id, made.publicKey)
        let blob = Array("written without a PIN".utf8)
        #expect(try await LargeBlobChecks.authenticate(client, credential: credential, LargeBlobInputs(write: Base64URLBytes(blob)))
            == ["written": true])
        #expect(try await LargeBlobChecks.authenticate(client, credential: credential, LargeBlobInputs(read: true))
            == ["blob": .string(Base64URL.encode(blob))])
        #expect(ui.pinRequests.isEmpty && !ui.statusLog.contains(.waitingForUv), "nothing but the touch was asked")

        await LargeBlobChecks.expectError(.unsupported, containing: "set a PIN first") {
            try await LargeBlobChecks.authenticate(
                client, credential: credential, LargeBlobInputs(write: Base64URLBytes([1])), userVerification: .required)
        }
    }

    /// On a key with a PIN the write still verifies the user, even when the
    /// request would rather not ("discouraged"): the PIN is asked, and the
    /// assertion carries UV.
    @Test func aKeyWithAPINStillVerifiesTheUserForAWrite() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=PIN Key,pin=1234,fingerprint=no"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: [String](repeating: "1234", count: 3))
        client.setUI(ui)
        let made = try await LargeBlobChecks.register(client, user: "alice")
        let credential = (made.id, made.publicKey)
        let asked = ui.pinRequests.count
        #expect(try await LargeBlobChecks.authenticate(
            client, credential: credential, LargeBlobInputs(write: Base64URLBytes([4, 5, 6])), userVerification: .discouraged,
            userVerified: true) == ["written": true])
        #expect(ui.pinRequests.count == asked + 1, "the write asked for the PIN")
        #expect(try await LargeBlobChecks.authenticate(client, credential: credential, LargeBlobInputs(read: true)) == ["blob": "BAUG"])
    }

    @Test func requiredFailsWhenNoKeyHasIt() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Plain Key,largeblobs=off"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        var create = WebAuthnFixtures.createParams(residentKey: .required)
        create.extensions = CreateExtensions()
        create.extensions?.largeBlob = LargeBlobInputs(support: "required")
        await LargeBlobChecks.expectError(.unsupported, containing: "no key present stores large blobs") {
            try await client.createCredential(create)
        }
    }
}
