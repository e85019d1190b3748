import AuthClient
import AuthProtocol
import Crypto
import Foundation
import TestSupport
import Testing

/// WebAuthn PRF and `hmacGetSecret` through the real daemon, on a socket
/// key (`authkeyd-virtkey --socket`) that python-fido2 reaches at the same
/// time over its own connection: python-fido2's client-side PRF on the
/// same credential and input must give the same bytes as the daemon.
@Suite(.timeLimit(.minutes(3)), .serialized) struct PRFTests {
    let directory = TemporaryDirectory(prefix: "authkeyd")
    var keySocket: String { directory.file("key.sock") }

    /// A socket key (with `settings`) and the daemon attached to it as `s1`.
    func start(_ settings: [String] = []) async throws -> (BackgroundProcess, DaemonProcess) {
        let server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", keySocket, "--name", "PRF Key"] + settings)
        #expect(waitUntil { access(keySocket, F_OK) == 0 })
        let daemon = try DaemonProcess(["--attach", "unix:\(keySocket)"], directory: directory)
        #expect(try await daemon.waitForKeys(1).map(\.id) == ["s1"])
        return (server, daemon)
    }

    /// Registers with `prf: {}`; the credential id, base64url.
    func register(_ client: AuthClient, user: String = "alice") async throws -> String {
        try await registerVerified(client, user: user).id
    }

    /// Registers with `prf: {}`, verified by py_webauthn; the credential id
    /// and the public key it gave, base64url.
    func registerVerified(_ client: AuthClient, user: String = "alice") async throws -> (id: String, publicKey: JSONValue) {
        let challenge = randomHash()
        var params = WebAuthnFixtures.createParams(user: user, userID: Array("user-\(user)".utf8), challenge: challenge)
        params.extensions = CreateExtensions()
        params.extensions?.prf = PRFInputs()
        let result = try await client.createCredential(params)
        #expect(result.prfOutputs == PRFOutputs(enabled: true))
        #expect(result.credential["clientExtensionResults"]?["prf"]?["results"] == nil, "no outputs at registration")
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let verdict = try RelyingPartyVerifier.verify("register", [
            "credential": result.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": "https://example.org", "rpId": "example.org",
        ])
        let registered = try verdict.get()
        return (try #require(result.credential["id"]?.stringValue), try #require(registered["publicKey"]))
    }

    func get(
        _ client: AuthClient, allow: [String], _ extensions: GetExtensions, userVerification: UserVerificationRequirement? = .discouraged
    ) async throws -> CredentialResult {
        var params = WebAuthnFixtures.getParams(allow: allow, userVerification: userVerification)
        params.extensions = extensions
        return try await client.getCredential(params)
    }

    func prf(_ first: [UInt8], _ second: [UInt8]? = nil) -> GetExtensions {
        var extensions = GetExtensions()
        extensions.prf = PRFInputs(eval: PRFValues(first: first, second: second))
        return extensions
    }

    /// python-fido2's own answer for `credential`, with `extensions` as WebAuthn JSON.
    func python(
        _ credential: String, _ extensions: JSONValue, pin: String? = nil, pinProtocol: Int? = nil,
        userVerification: String = "discouraged"
    ) throws -> JSONValue {
        var request: JSONObject = [
            "socket": .string(keySocket), "origin": "https://example.org", "rpId": "example.org",
            "allowCredentials": [.string(credential)], "extensions": extensions,
            "userVerification": .string(userVerification),
        ]
        if let pin { request["pin"] = .string(pin) }
        if let pinProtocol { request["pinProtocol"] = .integer(Int64(pinProtocol)) }
        switch try PythonFIDO2Client.ask(.object(request)) {
        case .success(let answer):
            #expect(answer["credentialId"]?.stringValue == credential)
            return answer
        case .failure(let failure):
            Issue.record("python-fido2 failed: \(failure)")
            return .null
        }
    }

    func prfJSON(_ first: [UInt8], _ second: [UInt8]? = nil) -> JSONValue {
        var eval: JSONObject = ["first": .string(Base64URL.encode(first))]
        if let second { eval["second"] = .string(Base64URL.encode(second)) }
        return ["prf": ["eval": .object(eval)]]
    }

    @Test func prfResultsEqualPythonFido2sOnTheSameCredential() async throws {
        try #require(PythonFIDO2Client.isAvailable, "run scripts/rp-venv (python-fido2 from Tests/RelyingParty/requirements.txt)")
        let (server, daemon) = try await start()
        defer { daemon.stop(); server.stop() }
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let (id, publicKey) = try await registerVerified(client)

        let first = Array("disk unlock".utf8), second = Array("next rotation".utf8)
        var options = WebAuthnFixtures.getParams(allow: [id], userVerification: .discouraged)
        options.extensions = prf(first, second)
        let result = try await client.getCredential(options)
        // The authenticator data now carries the extension output: a relying party still verifies it.
        let verified = try RelyingPartyVerifier.verify("authenticate", [
            "credential": result.credential, "challenge": .string(try #require(options.challenge).description),
            "origin": "https://example.org", "rpId": "example.org", "publicKey": publicKey,
        ])
        if case .failure(let failure) = verified { Issue.record("py_webauthn refused the assertion: \(failure)") }
        let outputs = try #require(result.prfOutputs?.results)
        let second32 = try #require(outputs.second)
        #expect(outputs.first.bytes.count == 32 && second32.bytes.count == 32)
        #expect(outputs.first != second32)
        #expect(result.credential["id"]?.stringValue == id)
        #expect(try await get(client, allow: [id], prf(first)).prfOutputs?.results == PRFValues(first: outputs.first.bytes),
                "the same input gives the same output")
        #expect(try await get(client, allow: [id], prf(Array("other".utf8))).prfOutputs?.results?.first != outputs.first)

        // python-fido2's WebAuthn client (protocol 2), and its hmac-secret
        // extension over protocol 1: the same bytes.
        let theirs = try python(id, prfJSON(first, second))
        #expect(theirs["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue == outputs.first.description)
        #expect(theirs["clientExtensionResults"]?["prf"]?["results"]?["second"]?.stringValue == second32.description)
        #expect(theirs["userVerified"] == false)
        let overOne = try python(id, prfJSON(first, second), pinProtocol: 1)
        #expect(overOne["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue == outputs.first.description)
        #expect(overOne["clientExtensionResults"]?["prf"]?["results"]?["second"]?.stringValue == second32.description)

        // hmacGetSecret with the PRF's own salts gives the PRF's outputs:
        // salt = SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input).
        let context = Array("WebAuthn PRF".utf8) + [0]
        let salt1 = SHA256.hash(context + first), salt2 = SHA256.hash(context + second)
        var raw = GetExtensions()
        raw.hmacGetSecret = HMACGetSecretInput(salt1: salt1, salt2: salt2)
        let hmac = try await get(client, allow: [id], raw)
        #expect(hmac.hmacGetSecretOutput == HMACGetSecretOutput(output1: outputs.first.bytes, output2: second32.bytes))
        #expect(hmac.credential["clientExtensionResults"]?["prf"] == nil)
        let pythonRaw = try python(id, ["hmacGetSecret": ["salt1": .string(Base64URL.encode(salt1))]])
        #expect(pythonRaw["clientExtensionResults"]?["hmacGetSecret"]?["output1"]?.stringValue == outputs.first.description)
        #expect(pythonRaw["clientExtensionResults"]?["hmacGetSecret"]?["output2"] == nil)

        // No output reaches the daemon's log (debug level).
        for output in [outputs.first, second32] { #expect(!daemon.log.contains(output.description)) }
    }

    /// CTAP 2.2 hmac-secret-mc, which the virtual key implements: python-fido2's
    /// PRF `eval` at registration gets results, and the daemon's later
    /// authentication with the same inputs gives the same bytes. The
    /// daemon's own registration cannot send hmac-secret-mc (libfido2 1.12
    /// has no such extension), so there `eval` is left for authentication.
    @Test func prfAtRegistrationByPythonFido2EqualsTheDaemonsLaterOutputs() async throws {
        try #require(PythonFIDO2Client.isAvailable, "run scripts/rp-venv")
        let (server, daemon) = try await start()
        defer { daemon.stop(); server.stop() }
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let first = Array("made with".utf8), second = Array("the credential".utf8)

        let made = try PythonFIDO2Client.ask([
            "mode": "register", "socket": .string(keySocket), "origin": "https://example.org", "rpId": "example.org",
            "extensions": prfJSON(first, second),
        ]).get()
        let registered = made["clientExtensionResults"]?["prf"]
        #expect(registered?["enabled"] == true)
        let atRegistration = try #require(registered?["results"]?["first"]?.stringValue)
        let id = try #require(made["credentialId"]?.stringValue)

        let later = try await get(client, allow: [id], prf(first, second))
        #expect(later.prfOutputs?.results?.first.description == atRegistration)
        #expect(later.prfOutputs?.results?.second?.description == registered?["results"]?["second"]?.stringValue)
        #expect(later.prfOutputs?.results?.second?.description != atRegistration)

        var params = WebAuthnFixtures.createParams()
        params.extensions = CreateExtensions()
        params.extensions?.prf = PRFInputs(eval: PRFValues(first: first))
        #expect(try await client.createCredential(params).prfOutputs == PRFOutputs(enabled: true))
    }

    @Test func userVerificationGivesOtherOutputsAndPythonFido2Agrees() async throws {
        try #require(PythonFIDO2Client.isAvailable, "run scripts/rp-venv")
        let (server, daemon) = try await start(["--pin", "1234"])
        defer { daemon.stop(); server.stop() }
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234", "1234", "1234"]))
        let id = try await register(client)
        let input = Array("age identity".utf8)

        let verified = try await get(client, allow: [id], prf(input), userVerification: .required)
        let presence = try await get(client, allow: [id], prf(input), userVerification: .discouraged)
        let withUV = try #require(verified.prfOutputs?.results?.first)
        let withoutUV = try #require(presence.prfOutputs?.results?.first)
        #expect(withUV != withoutUV, "CredRandomWithUV and WithoutUV differ")

        let theirs = try python(id, prfJSON(input), pin: "1234", userVerification: "required")
        #expect(theirs["userVerified"] == true)
        #expect(theirs["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue == withUV.description)
        let theirsOverOne = try python(id, prfJSON(input), pin: "1234", pinProtocol: 1)
        #expect(theirsOverOne["userVerified"] == true)
        #expect(theirsOverOne["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue == withUV.description)
        let theirsWithout = try python(id, prfJSON(input))
        #expect(theirsWithout["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue == withoutUV.description)
    }

    @Test func evalByCredentialFollowsTheCredentialTheKeyUses() async throws {
        try #require(PythonFIDO2Client.isAvailable, "run scripts/rp-venv")
        let (server, daemon) = try await start()
        defer { daemon.stop(); server.stop() }
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let a = try await register(client, user: "alice"), b = try await register(client, user: "bob")
        let shared = Array("for anyone".utf8), forB = Array("for bob".utf8)

        func request(allow: [String], byCredential: [String: [UInt8]], eval: [UInt8]?) async throws -> CredentialResult {
            var extensions = GetExtensions()
            extensions.prf = PRFInputs(
                eval: eval.map { PRFValues(first: $0) }, evalByCredential: byCredential.mapValues { PRFValues(first: $0) })
            return try await get(client, allow: allow, extensions)
        }
        func pythonFirst(_ id: String, _ input: [UInt8]) throws -> String? {
            try python(id, prfJSON(input))["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue
        }

        // The key answers with the first allowed credential it holds.
        let usesA = try await request(allow: [a, b], byCredential: [b: forB], eval: shared)
        #expect(usesA.credential["id"]?.stringValue == a)
        #expect(usesA.prfOutputs?.results?.first.description == (try pythonFirst(a, shared)), "eval for a credential not listed")
        let usesB = try await request(allow: [b, a], byCredential: [b: forB], eval: shared)
        #expect(usesB.credential["id"]?.stringValue == b)
        #expect(usesB.prfOutputs?.results?.first.description == (try pythonFirst(b, forB)), "its own inputs take precedence")
        #expect(usesB.prfOutputs?.results?.first.description != (try pythonFirst(b, shared)))
        // Inputs only for another credential: no results, and no guess.
        let none = try await request(allow: [a, b], byCredential: [b: forB], eval: nil)
        #expect(none.credential["id"]?.stringValue == a)
        #expect(none.prfOutputs == PRFOutputs())

        // WebAuthn's rules: an allow list, and only ids from it.
        await expectReason(.invalidParams) { try await request(allow: [], byCredential: [b: forB], eval: shared) }
        await expectReason(.invalidParams) { try await request(allow: [a], byCredential: [b: forB], eval: shared) }
        await expectReason(.invalidParams) { try await request(allow: [a], byCredential: ["not base64!": forB], eval: nil) }
    }

    /// A credential that shows itself only after user verification
    /// (credProtect 3) is not seen by the silent probe: with one allowed
    /// credential its own inputs still go with it; with several, the
    /// daemon sends `eval`'s and gives no results for it rather than
    /// outputs of inputs meant for another credential.
    @Test func evalByCredentialWithACredentialTheProbeCannotSee() async throws {
        try #require(PythonFIDO2Client.isAvailable, "run scripts/rp-venv")
        let (server, daemon) = try await start(["--pin", "1234"])
        defer { daemon.stop(); server.stop() }
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: Array(repeating: "1234", count: 4)))
        var params = WebAuthnFixtures.createParams(userVerification: .required)
        params.extensions = CreateExtensions()
        params.extensions?.prf = PRFInputs()
        params.extensions?.credentialProtectionPolicy = "userVerificationRequired"
        params.extensions?.enforceCredentialProtectionPolicy = true
        let hidden = try #require(try await client.createCredential(params).credential["id"]?.stringValue)
        let own = Array("its own".utf8), shared = Array("anyone's".utf8)
        let foreign = Base64URL.encode(secureRandomBytes(64))

        func request(allow: [String]) async throws -> CredentialResult {
            var extensions = GetExtensions()
            extensions.prf = PRFInputs(eval: PRFValues(first: shared), evalByCredential: [hidden: PRFValues(first: own)])
            return try await get(client, allow: allow, extensions, userVerification: .required)
        }
        let alone = try await request(allow: [hidden])
        #expect(alone.credential["id"]?.stringValue == hidden)
        let theirs = try python(hidden, prfJSON(own), pin: "1234", userVerification: "required")
        #expect(theirs["userVerified"] == true)
        #expect(alone.prfOutputs?.results?.first.description == theirs["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue)

        let unseen = try await request(allow: [foreign, hidden])
        #expect(unseen.credential["id"]?.stringValue == hidden)
        #expect(unseen.prfOutputs == PRFOutputs(), "no results, and not those of eval's input")
    }

    @Test func badSaltsAndMixedExtensionsAreInvalidParams() async throws {
        let (server, daemon) = try await start()
        defer { daemon.stop(); server.stop() }
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let id = try await register(client)

        func expectRefused(_ extensions: GetExtensions, naming words: [String], secret: [UInt8]? = nil) async {
            do {
                _ = try await get(client, allow: [id], extensions)
                Issue.record("expected invalidParams")
            } catch let error as AuthClientError {
                #expect(error.reason == .invalidParams, "\(error)")
                for word in words { #expect(error.description.contains(word), "\(error)") }
                if let secret { #expect(!error.description.contains(Base64URL.encode(secret)), "no salt in the message") }
            } catch {
                Issue.record("expected invalidParams, got \(error)")
            }
        }
        let short = secureRandomBytes(16), long = secureRandomBytes(33)
        var raw = GetExtensions()
        raw.hmacGetSecret = HMACGetSecretInput(salt1: short)
        await expectRefused(raw, naming: ["hmacGetSecret.salt1", "32 bytes", "16"], secret: short)
        raw.hmacGetSecret = HMACGetSecretInput(salt1: randomHash(), salt2: long)
        await expectRefused(raw, naming: ["hmacGetSecret.salt2", "33"], secret: long)
        raw.hmacGetSecret = HMACGetSecretInput(salt1: [])
        await expectRefused(raw, naming: ["salt1", "0"])
        var both = prf(Array("x".utf8))
        both.hmacGetSecret = HMACGetSecretInput(salt1: randomHash())
        await expectRefused(both, naming: ["prf or hmacGetSecret"])

        // A salt that is not base64url: the message does not echo it.
        let garbled: JSONValue = [
            "challenge": .string(Base64URL.encode(randomHash())), "rpId": "example.org",
            "allowCredentials": [["type": "public-key", "id": .string(id)]],
            "extensions": ["hmacGetSecret": ["salt1": "secret*salt*text"]],
        ]
        do {
            _ = try await client.call(AuthProtocol.Method.getCredential, params: garbled)
            Issue.record("expected invalidParams")
        } catch {
            #expect(error.reason == .invalidParams, "\(error)")
            #expect(error.description.contains("salt1") && !error.description.contains("secret*salt*text"), "\(error)")
        }

        // evalByCredential at registration has nothing to refer to.
        var create = WebAuthnFixtures.createParams()
        create.extensions = CreateExtensions()
        create.extensions?.prf = PRFInputs(evalByCredential: [id: PRFValues(first: [1])])
        await expectReason(.invalidParams) { try await client.createCredential(create) }

        // The daemon keeps serving, and PRF inputs of any length are fine.
        let fine = try await get(client, allow: [id], prf([UInt8](repeating: 9, count: 100), []))
        #expect(fine.prfOutputs?.results?.second?.bytes.count == 32)
    }

    @Test func aCredentialWithoutHMACSecretAnswersWithoutOutputs() async throws {
        let (server, daemon) = try await start()
        defer { daemon.stop(); server.stop() }
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let plain = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(plain.credential["clientExtensionResults"] == [:])
        let id = try #require(plain.credential["id"]?.stringValue)

        let withPRF = try await get(client, allow: [id], prf(Array("x".utf8)))
        #expect(withPRF.prfOutputs == PRFOutputs(), "prf answers {} without results")
        var raw = GetExtensions()
        raw.hmacGetSecret = HMACGetSecretInput(salt1: randomHash())
        let withRaw = try await get(client, allow: [id], raw)
        #expect(withRaw.hmacGetSecretOutput == nil)
        #expect(withRaw.credential["clientExtensionResults"] == [:])
    }
}
