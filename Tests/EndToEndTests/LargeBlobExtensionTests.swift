import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// WebAuthn's largeBlob extension against the real daemon: registration
/// with `support`, then `write` and `read` at authentication, every result
/// checked by py_webauthn, and the stored blob read back independently by
/// python-fido2 from the same key on a socket, one with a PIN and one with
/// neither PIN nor fingerprint; a full store, with the reason in authkeyd's
/// log. (Choosing a key for `support` and a write
/// verified by a fingerprint are tested against the broker in process:
/// AuthDaemonTests.LargeBlobExtensionTests.)
@Suite(.timeLimit(.minutes(2))) struct LargeBlobExtensionTests {
    /// `authkeyd-virtkey --socket` with `settings`, and authkeyd attached
    /// to it: python-fido2 reaches the same key on the socket.
    struct KeyOnASocket {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let socket: String
        let key: BackgroundProcess
        let daemon: DaemonProcess

        init(_ settings: [String]) async throws {
            let path = directory.file("virtkey.sock")
            socket = path
            key = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", path] + settings)
            #expect(waitUntil { access(path, F_OK) == 0 })
            daemon = try DaemonProcess(["--attach", "unix:\(path)"], directory: directory)
            _ = try await daemon.waitForKeys(1)
        }
    }

    @Test func writeThenReadAndAnotherCredentialHasNoBlob() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let served = try await KeyOnASocket(["--name", "Blob Key", "--pin", "1234"])
        defer { served.key.stop() }
        let (socket, daemon) = (served.socket, served.daemon)
        let client = try daemon.client()
        let ui = ScriptedUI(pins: [String](repeating: "1234", count: 10))
        client.setUI(ui)

        let alice = try await LargeBlobChecks.register(client, user: "alice")
        #expect(alice.result == ["supported": true])
        let bob = try await LargeBlobChecks.register(client, user: "bob", support: "preferred")
        #expect(bob.result == ["supported": true])

        // A write verifies the user (a pinUvAuthToken with lbw), whatever was asked.
        let pinsBefore = ui.pinRequests.count
        let blob = Array("alice's wrapped key: ".utf8) + randomHash()
        let written = try await LargeBlobChecks.authenticate(
            client, credential: (alice.id, alice.publicKey), LargeBlobInputs(write: Base64URLBytes(blob)), userVerified: true)
        #expect(written == ["written": true])
        #expect(ui.pinRequests.count > pinsBefore, "the write asked for the PIN")

        let read = try await LargeBlobChecks.authenticate(client, credential: (alice.id, alice.publicKey), LargeBlobInputs(read: true))
        #expect(read?["blob"]?.stringValue.flatMap(Base64URL.decode) == blob)
        let bobRead = try await LargeBlobChecks.authenticate(client, credential: (bob.id, bob.publicKey), LargeBlobInputs(read: true))
        #expect(bobRead == [:], "no blob stored for bob: the member is absent")

        // Another host, python-fido2, finds the same bytes on the key.
        let independent = try PythonFIDO2.readLargeBlob(socket: socket, rpID: "example.org", credentialID: alice.id)
        #expect(independent.blob == blob)
        #expect(independent.entries == 1)
        #expect(try PythonFIDO2.readLargeBlob(socket: socket, rpID: "example.org", credentialID: bob.id).blob == nil)

        // A second write replaces the first.
        let replaced = try await LargeBlobChecks.authenticate(
            client, credential: (alice.id, alice.publicKey), LargeBlobInputs(write: Base64URLBytes([7])), userVerified: true)
        #expect(replaced == ["written": true])
        #expect(try PythonFIDO2.readLargeBlob(socket: socket, rpID: "example.org", credentialID: alice.id).blob == [7])
        #expect(!daemon.log.contains(Base64URL.encode(blob)), "no blob in the log")
    }

    /// A key with neither PIN nor fingerprint takes the write without a
    /// pinUvAuthToken (CTAP 2.1 §6.10.2), and python-fido2 finds the blob
    /// sealed as it would seal it.
    @Test func aKeyWithoutUserVerificationIsWrittenWithoutAPIN() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let served = try await KeyOnASocket(["--name", "Bare Key", "--fingerprint", "no"])
        defer { served.key.stop() }
        let (socket, daemon) = (served.socket, served.daemon)
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)

        let alice = try await LargeBlobChecks.register(client, user: "alice")
        let blob = Array("no PIN to ask: ".utf8) + randomHash()
        let written = try await LargeBlobChecks.authenticate(
            client, credential: (alice.id, alice.publicKey), LargeBlobInputs(write: Base64URLBytes(blob)))
        #expect(written == ["written": true], "authkeyd's log:\n\(daemon.log)")
        #expect(ui.pinRequests.isEmpty)
        let independent = try PythonFIDO2.readLargeBlob(socket: socket, rpID: "example.org", credentialID: alice.id)
        #expect(independent.blob == blob)
        #expect(independent.entries == 1)
    }

    @Test func badInputIsRefusedWithTheReason() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Blob Key,pin=1234"])
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: [String](repeating: "1234", count: 10)))

        var create = WebAuthnFixtures.createParams(residentKey: .required)
        create.extensions = CreateExtensions()
        create.extensions?.largeBlob = LargeBlobInputs(read: true)
        await LargeBlobChecks.expectError(.invalidParams, containing: "only support") { try await client.createCredential(create) }
        create.extensions?.largeBlob = LargeBlobInputs(support: "sometimes")
        await LargeBlobChecks.expectError(.invalidParams, containing: "\"sometimes\"") { try await client.createCredential(create) }
        var discouraged = WebAuthnFixtures.createParams(residentKey: .discouraged)
        discouraged.extensions = CreateExtensions()
        discouraged.extensions?.largeBlob = LargeBlobInputs(support: "required")
        await LargeBlobChecks.expectError(.invalidParams, containing: "discoverable") { try await client.createCredential(discouraged) }

        create.extensions?.largeBlob = LargeBlobInputs(support: "required")
        let created = try await client.createCredential(create)
        let id = try #require(created.credential["id"]?.stringValue)

        var get = WebAuthnFixtures.getParams(allow: [id])
        get.extensions = GetExtensions()
        get.extensions?.largeBlob = LargeBlobInputs(read: true, write: Base64URLBytes([1]))
        await LargeBlobChecks.expectError(.invalidParams, containing: "read and write together") { try await client.getCredential(get) }
        get.extensions?.largeBlob = LargeBlobInputs(support: "required")
        await LargeBlobChecks.expectError(.invalidParams, containing: "support belongs to credentials.create") {
            try await client.getCredential(get)
        }
        get.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes([UInt8](repeating: 0x41, count: 1025)))
        await LargeBlobChecks.expectError(.invalidParams, containing: "at most 1024 bytes") { try await client.getCredential(get) }
        get.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes([]))
        await LargeBlobChecks.expectError(.invalidParams, containing: "empty blob") { try await client.getCredential(get) }
        var unnamed = WebAuthnFixtures.getParams(allow: [])
        unnamed.extensions = GetExtensions()
        unnamed.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes([1]))
        await LargeBlobChecks.expectError(.invalidParams, containing: "exactly one credential in allowCredentials") {
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
}
