import AuthClient
import AuthProtocol
import BrokerTestSupport
import Foundation
import TestSupport
import Testing

/// pubKeyCredParams through the broker in process (moved from
/// EndToEndTests; `authctl register --algorithm` stays there): the relying party's order
/// against each key's getInfo `algorithms`, checked by py_webauthn and
/// Debian's fido2-tools.
@Suite(.timeLimit(.minutes(3))) struct AlgorithmTests {
    static func params(_ algorithms: [Int], challenge: [UInt8] = randomHash(), authenticator: String? = nil) -> CreateParams {
        var params = WebAuthnFixtures.createParams(challenge: challenge, authenticator: authenticator, attestation: .direct)
        params.pubKeyCredParams = algorithms.map { .init(alg: $0) }
        return params
    }

    /// Registers with `algorithms` and authenticates once, both verified by
    /// py_webauthn; returns the registration's credential and what the
    /// relying party read from it.
    func registerAndAuthenticate(_ client: AuthClient, _ algorithms: [Int]) async throws -> (created: CredentialResult, asserted: CredentialResult) {
        let challenge = randomHash()
        let created = try await client.createCredential(Self.params(algorithms, challenge: challenge))
        let registered = try await RelyingPartyVerifier.verifying("register", [
            "credential": created.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": "https://example.org", "rpId": "example.org",
        ]).get()
        #expect(registered["format"] == "packed")
        let assertionChallenge = randomHash()
        let asserted = try await client.getCredential(
            WebAuthnFixtures.getParams(challenge: assertionChallenge, allow: [registered["credentialId"]!.stringValue!]))
        let request: JSONValue = [
            "credential": asserted.credential, "challenge": .string(Base64URL.encode(assertionChallenge)),
            "origin": "https://example.org", "rpId": "example.org", "publicKey": registered["publicKey"]!,
            "signCount": registered["signCount"]!,
        ]
        _ = try await RelyingPartyVerifier.verifying("authenticate", request).get()
        return (created, asserted)
    }

    @Test func theRelyingPartysOrderChoosesTheAlgorithm() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=Both"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())

        let edDSA = try await registerAndAuthenticate(client, [-8, -7])
        #expect(edDSA.created.credential["response"]?["publicKeyAlgorithm"] == -8)
        #expect(edDSA.created.registration?.publicKeyAlgorithm == -8)
        let signature = try #require(edDSA.asserted.credential["response"]?["signature"]?.stringValue.flatMap(Base64URL.decode))
        #expect(signature.count == 64, "an Ed25519 signature, not a DER ECDSA one")
        // getPublicKey(): RFC 8410's SubjectPublicKeyInfo.
        let publicKey = try #require(edDSA.created.credential["response"]?["publicKey"]?.stringValue.flatMap(Base64URL.decode))
        #expect(publicKey.count == 44 && hex(Array(publicKey.prefix(12))) == "302a300506032b6570032100")
        try expectToolsAccept(edDSA.asserted.credential, publicKeyDER: publicKey, type: "eddsa")

        let es256 = try await registerAndAuthenticate(client, [-7, -8])
        #expect(es256.created.credential["response"]?["publicKeyAlgorithm"] == -7)
        #expect(es256.created.registration?.publicKeyAlgorithm == -7)
        let es256Key = try #require(es256.created.credential["response"]?["publicKey"]?.stringValue.flatMap(Base64URL.decode))
        try expectToolsAccept(es256.asserted.credential, publicKeyDER: es256Key, type: "es256")

        // No pubKeyCredParams: WebAuthn's default, ES256 then RS256.
        let byDefault = try await client.createCredential(Self.params([]))
        #expect(byDefault.registration?.publicKeyAlgorithm == -7)
        // Unknown algorithms before a known one are skipped.
        let afterUnknown = try await client.createCredential(Self.params([-999, -257, -8]))
        #expect(afterUnknown.registration?.publicKeyAlgorithm == -8)
        let listed = try await client.listRegistrations()
        #expect(Set(listed.compactMap(\.publicKeyAlgorithm)) == [-7, -8])
    }

    /// The public key the daemon reported (`response.publicKey`) verifies
    /// the assertion in fido2-assert, which reads it as a PEM file.
    func expectToolsAccept(_ assertion: JSONValue, publicKeyDER: [UInt8], type: String) throws {
        try #require(isInstalled("fido2-assert"), "needs Debian's fido2-tools")
        let response = try #require(assertion["response"])
        let clientData = try #require(response["clientDataJSON"]?.stringValue.flatMap(Base64URL.decode))
        let authenticatorData = try #require(response["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
        let signature = try #require(response["signature"]?.stringValue.flatMap(Base64URL.decode))
        let digest = try run("/usr/bin/sha256sum", [], input: String(decoding: clientData, as: UTF8.self))
        let clientDataHash = bytes(fromHex: String(digest.standardOutput.prefix(64)))
        // fido2-assert takes authenticator data CBOR-wrapped: a byte string of 37 bytes.
        let wrapped = [0x58, UInt8(authenticatorData.count)] + authenticatorData
        let lines = [
            Data(clientDataHash).base64EncodedString(), "example.org", Data(wrapped).base64EncodedString(),
            Data(signature).base64EncodedString(),
        ].joined(separator: "\n") + "\n"
        let directory = TemporaryDirectory()
        let pem = directory.file("key.pem")
        let body = Data(publicKeyDER).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        try "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END PUBLIC KEY-----\n".write(toFile: pem, atomically: true, encoding: .utf8)
        let accepted = try run("/usr/bin/fido2-assert", ["-V", "-p", pem, type], input: lines)
        #expect(accepted.status == 0, "fido2-assert -V \(type): \(accepted.standardError)")
        let forged = lines.replacingOccurrences(of: "\nexample.org\n", with: "\nexample.com\n")
        #expect(try run("/usr/bin/fido2-assert", ["-V", pem, type], input: forged).status != 0)
    }

    @Test func aKeyWithoutTheOfferedAlgorithmsAnswersUnsupported() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Old Key,algorithms=es256"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        do {
            _ = try await client.createCredential(Self.params([-8]))
            Issue.record("an EdDSA credential from a key without EdDSA")
        } catch {
            #expect(error.reason == .unsupported)
            let message = error.description
            #expect(message.contains("EdDSA (-8)") && message.contains("v1 \"Old Key\" has ES256 (-7)"), "\(message)")
        }
        // Nothing authkeyd can ask any key for: refused before any key is asked.
        await expectReason(.unsupported) { try await client.createCredential(Self.params([-999, -35])) }
        do {
            _ = try await client.createCredential(Self.params([-36]))
            Issue.record("ES512 accepted")
        } catch {
            #expect(error.description.contains("ES256 (-7), EdDSA (-8), RS256 (-257)"), "\(error)")
        }
        // The daemon carries on serving: ES256 from the same key.
        #expect(try await client.createCredential(Self.params([-8, -7])).registration?.publicKeyAlgorithm == -7)
    }

    /// Two keys, one without EdDSA: an EdDSA registration goes to the
    /// other without asking which; naming the first is `unsupported`.
    @Test func onlyKeysWithAnOfferedAlgorithmAreOffered() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=ES only,algorithms=es256", "--virtual-key", "name=Both"])
        let client = try daemon.client()
        let ui = ScriptedUI(choice: .authenticator(id: "v1"))
        client.setUI(ui)
        let created = try await client.createCredential(Self.params([-8]))
        #expect(created.registration?.authenticatorProduct == "Both")
        #expect(created.registration?.publicKeyAlgorithm == -8)
        #expect(!ui.prompts.contains("select"), "one key can do it: \(ui.prompts)")

        await expectReason(.unsupported) { try await client.createCredential(Self.params([-8], authenticator: "v1")) }
        // Both keys can do ES256: the user is asked, and gets the one chosen.
        let es256 = try await client.createCredential(Self.params([-7, -8]))
        #expect(ui.prompts.contains("select"))
        #expect(ui.offeredKeys.last?.map(\.id) == ["v1", "v2"])
        #expect(es256.registration?.authenticatorProduct == "ES only")
    }
}
