import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// WebAuthn's largeBlob extension against the real daemon: registration
/// with `support`, then `write` and `read` at authentication, every result
/// checked by py_webauthn, and the stored blob read back independently by
/// python-fido2 from the same key.
@Suite(.timeLimit(.minutes(2))) struct LargeBlobExtensionTests {
    static let origin = "https://example.org"

    /// Registers a discoverable credential with `largeBlob: {support}`,
    /// verified by py_webauthn; its id, public key and the extension result.
    static func register(
        _ client: AuthClient, user: String, support: String = "required", authenticator: String? = nil
    ) async throws -> (id: String, publicKey: JSONValue, result: JSONValue?) {
        let challenge = randomHash()
        var params = WebAuthnFixtures.createParams(
            user: user, userID: Array("user-\(user)".utf8), challenge: challenge, residentKey: "required",
            authenticator: authenticator)
        params.extensions = CreateExtensions()
        params.extensions?.largeBlob = LargeBlobInputs(support: support)
        let created = try await client.createCredential(params)
        let registered = try RelyingPartyVerifier.verify("register", [
            "credential": created.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": .string(origin), "rpId": "example.org",
        ]).get()
        return (
            try #require(registered["credentialId"]?.stringValue), try #require(registered["publicKey"]),
            created.credential["clientExtensionResults"]?["largeBlob"]
        )
    }

    /// An authentication with `largeBlob` inputs, verified by py_webauthn;
    /// `clientExtensionResults.largeBlob`.
    static func authenticate(
        _ client: AuthClient, credential: (id: String, publicKey: JSONValue), _ inputs: LargeBlobInputs,
        userVerified: Bool = false
    ) async throws -> JSONValue? {
        let challenge = randomHash()
        var params = WebAuthnFixtures.getParams(challenge: challenge, allow: [credential.id])
        params.extensions = GetExtensions()
        params.extensions?.largeBlob = inputs
        let assertion = try await client.getCredential(params)
        let verified = try RelyingPartyVerifier.verify("authenticate", [
            "credential": assertion.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": .string(origin), "rpId": "example.org", "publicKey": credential.publicKey,
            "requireUserVerification": .bool(userVerified),
        ]).get()
        #expect(verified["signCount"] != nil)
        return assertion.credential["clientExtensionResults"]?["largeBlob"]
    }

    /// Expects the daemon's error with `reason`, its message containing `text`.
    static func expectError<T>(
        _ reason: ErrorReason, containing text: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ call: () async throws -> T
    ) async {
        do {
            _ = try await call()
            Issue.record("expected \(reason), but the call succeeded", sourceLocation: sourceLocation)
        } catch AuthClientError.daemon(let error) {
            #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "message: \(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected \(reason), got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func writeThenReadAndAnotherCredentialHasNoBlob() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let socket = directory.file("virtkey.sock")
        let key = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", socket, "--name", "Blob Key", "--pin", "1234"])
        defer { key.stop() }
        #expect(waitUntil { access(socket, F_OK) == 0 })
        let daemon = try DaemonProcess(["--attach", "unix:\(socket)"], directory: directory)
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        let ui = ScriptedUI(pins: [String](repeating: "1234", count: 10))
        client.setUI(ui)

        let alice = try await Self.register(client, user: "alice")
        #expect(alice.result == ["supported": true])
        let bob = try await Self.register(client, user: "bob", support: "preferred")
        #expect(bob.result == ["supported": true])

        // A write verifies the user (a pinUvAuthToken with lbw), whatever was asked.
        let pinsBefore = ui.pinRequests.count
        let blob = Array("alice's wrapped key: ".utf8) + randomHash()
        let written = try await Self.authenticate(
            client, credential: (alice.id, alice.publicKey), LargeBlobInputs(write: Base64URLBytes(blob)), userVerified: true)
        #expect(written == ["written": true])
        #expect(ui.pinRequests.count > pinsBefore, "the write asked for the PIN")

        let read = try await Self.authenticate(client, credential: (alice.id, alice.publicKey), LargeBlobInputs(read: true))
        #expect(read?["blob"]?.stringValue.flatMap(Base64URL.decode) == blob)
        let bobRead = try await Self.authenticate(client, credential: (bob.id, bob.publicKey), LargeBlobInputs(read: true))
        #expect(bobRead == [:], "no blob stored for bob: the member is absent")

        // Another host, python-fido2, finds the same bytes on the key.
        let independent = try PythonFIDO2.readLargeBlob(socket: socket, rpID: "example.org", credentialID: alice.id)
        #expect(independent.blob == blob)
        #expect(independent.entries == 1)
        #expect(try PythonFIDO2.readLargeBlob(socket: socket, rpID: "example.org", credentialID: bob.id).blob == nil)

        // A second write replaces the first.
        let replaced = try await Self.authenticate(
            client, credential: (alice.id, alice.publicKey), LargeBlobInputs(write: Base64URLBytes([7])), userVerified: true)
        #expect(replaced == ["written": true])
        #expect(try PythonFIDO2.readLargeBlob(socket: socket, rpID: "example.org", credentialID: alice.id).blob == [7])
        #expect(!daemon.log.contains(Base64URL.encode(blob)), "no blob in the log")
    }

    @Test func badInputIsRefusedWithTheReason() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Blob Key,pin=1234"])
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: [String](repeating: "1234", count: 10)))

        var create = WebAuthnFixtures.createParams(residentKey: "required")
        create.extensions = CreateExtensions()
        create.extensions?.largeBlob = LargeBlobInputs(read: true)
        await Self.expectError(.invalidParams, containing: "only support") { try await client.createCredential(create) }
        create.extensions?.largeBlob = LargeBlobInputs(support: "sometimes")
        await Self.expectError(.invalidParams, containing: "\"sometimes\"") { try await client.createCredential(create) }
        var discouraged = WebAuthnFixtures.createParams(residentKey: "discouraged")
        discouraged.extensions = CreateExtensions()
        discouraged.extensions?.largeBlob = LargeBlobInputs(support: "required")
        await Self.expectError(.invalidParams, containing: "discoverable") { try await client.createCredential(discouraged) }

        create.extensions?.largeBlob = LargeBlobInputs(support: "required")
        let created = try await client.createCredential(create)
        let id = try #require(created.credential["id"]?.stringValue)

        var get = WebAuthnFixtures.getParams(allow: [id])
        get.extensions = GetExtensions()
        get.extensions?.largeBlob = LargeBlobInputs(read: true, write: Base64URLBytes([1]))
        await Self.expectError(.invalidParams, containing: "read and write together") { try await client.getCredential(get) }
        get.extensions?.largeBlob = LargeBlobInputs(support: "required")
        await Self.expectError(.invalidParams, containing: "support belongs to credentials.create") {
            try await client.getCredential(get)
        }
        get.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes([UInt8](repeating: 0x41, count: 1025)))
        await Self.expectError(.invalidParams, containing: "at most 1024 bytes") { try await client.getCredential(get) }
        get.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes([]))
        await Self.expectError(.invalidParams, containing: "empty blob") { try await client.getCredential(get) }
        var unnamed = WebAuthnFixtures.getParams(allow: [])
        unnamed.extensions = GetExtensions()
        unnamed.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes([1]))
        await Self.expectError(.invalidParams, containing: "exactly one credential in allowCredentials") {
            try await client.getCredential(unnamed)
        }

        // Under the limit, but more than the array can hold once sealed: not written.
        let incompressible = (0..<32).flatMap { _ in randomHash() }
        get.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes(Array(incompressible.prefix(1020))))
        let full = try await client.getCredential(get)
        #expect(full.credential["clientExtensionResults"]?["largeBlob"] == ["written": false])
        #expect(daemon.log.contains("FIDO_ERR_LARGEBLOB_STORAGE_FULL"), "the reason is logged")
        // The daemon keeps serving.
        #expect(try await client.listAuthenticators().count == 1)
    }

    @Test func requiredSupportChoosesAKeyThatHasIt() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try DaemonProcess([
            "--virtual-key", "name=Plain Key,largeblobs=off", "--virtual-key", "name=Blob Key",
        ])
        let keys = try await daemon.waitForKeys(2)
        let client = try daemon.client()
        // Only one key qualifies: no selectAuthenticator prompt is needed.
        let ui = ScriptedUI()
        client.setUI(ui)
        let made = try await Self.register(client, user: "alice")
        #expect(made.result == ["supported": true])
        #expect(!ui.prompts.contains("select"), "prompts: \(ui.prompts)")
        // That key has no PIN: a write, which needs verification, cannot be done.
        await Self.expectError(.unsupported, containing: "set a PIN first") {
            try await Self.authenticate(client, credential: (made.id, made.publicKey), LargeBlobInputs(write: Base64URLBytes([1])))
        }

        let plain = try #require(keys.first { $0.product == "Plain Key" }?.id)
        await Self.expectError(.unsupported, containing: "does not store large blobs") {
            try await Self.register(client, user: "bob", authenticator: plain)
        }
        let preferred = try await Self.register(client, user: "carol", support: "preferred", authenticator: plain)
        #expect(preferred.result == ["supported": false])
    }

    @Test func withAFingerprintTheWriteNeedsNoPIN() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let state = try HandshakeTests().keyWithFingerprint(in: directory)
        let daemon = try DaemonProcess(["--virtual-key", "name=Bio,state=\(state)"], directory: directory)
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        let ui = ScriptedUI(pins: [])
        client.setUI(ui)
        let made = try await Self.register(client, user: "alice")
        let credential = (made.id, made.publicKey)
        #expect(try await Self.authenticate(client, credential: credential, LargeBlobInputs(write: Base64URLBytes([1, 2, 3])), userVerified: true)
            == ["written": true])
        #expect(try await Self.authenticate(client, credential: credential, LargeBlobInputs(read: true)) == ["blob": "AQID"])
        #expect(ui.pinRequests.isEmpty, "the sensor verified both the assertion and the write")
    }

    @Test func requiredFailsWhenNoKeyHasIt() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Plain Key,largeblobs=off"])
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        var create = WebAuthnFixtures.createParams(residentKey: "required")
        create.extensions = CreateExtensions()
        create.extensions?.largeBlob = LargeBlobInputs(support: "required")
        await Self.expectError(.unsupported, containing: "no key present stores large blobs") {
            try await client.createCredential(create)
        }
    }
}
