import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
import Testing

/// The broker serving a key that speaks only U2F (CTAP1), the virtual
/// key's `ctap=u2f`, in process (moved from EndToEndTests, which keeps a
/// U2F key on a socket from `authkeyd-virtkey --ctap u2f` and what authctl
/// shows). Registrations and assertions go through libfido2's U2F path and
/// are verified by py_webauthn; what U2F cannot do is refused with
/// `unsupported` and the reason.
@Suite(.timeLimit(.minutes(3))) struct U2FOnlyKeyTests {
    /// The error a call ends with; nil (and a recorded issue) if it succeeded.
    func failure<T>(_ call: () async throws -> T, sourceLocation: SourceLocation = #_sourceLocation) async -> AuthClientError? {
        do {
            _ = try await call()
            Issue.record("expected an error, but the call succeeded", sourceLocation: sourceLocation)
        } catch let error as AuthClientError {
            return error
        } catch {
            Issue.record("expected an AuthClientError, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// `unsupported`, saying it is because of U2F and naming `what`.
    func expectUnsupported<T>(
        naming what: String, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> T
    ) async {
        let error = await failure(call, sourceLocation: sourceLocation)
        #expect(error?.reason == .unsupported, "\(String(describing: error))", sourceLocation: sourceLocation)
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("U2F (CTAP1)") && message.contains(what), "the reason: \(message)", sourceLocation: sourceLocation)
    }

    @Test func anInProcessU2FKeyRegistersAndAuthenticatesAndIsListedAsU2F() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Old U2F Key,ctap=u2f,presence=after:200ms"])
        let keys = try await daemon.listKeys()
        #expect(keys.first?.ctap == .u2f)
        #expect(keys.first.map { !$0.pin && !$0.uv && !$0.rk && !$0.credMgmt && !$0.bioEnroll } == true)
        let client = try daemon.client()
        let details = try await client.authenticatorInfo("v1")
        #expect(details.info.versions == ["U2F_V2"])
        #expect(details.info.algorithms.map(\.alg) == [-7])
        #expect(details.info.options.isEmpty && details.info.extensions.isEmpty)
        #expect(details.info.pinRetries == nil)
        let ui = ScriptedUI()
        client.setUI(ui)
        try await U2FChecks.registerAndAuthenticate(client)
        #expect(ui.statusLog.contains(.waitingForTouch))

    }

    @Test func whatU2FCannotDoIsUnsupportedWithTheReasonBeforeAnyTouch() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=U2F,ctap=u2f"])
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        await expectUnsupported(naming: "residentKey") {
            try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        }
        await expectUnsupported(naming: "userVerification") {
            try await client.createCredential(WebAuthnFixtures.createParams(userVerification: .required))
        }
        var enforced = WebAuthnFixtures.createParams()
        enforced.extensions = CreateExtensions()
        enforced.extensions?.credentialProtectionPolicy = "userVerificationRequired"
        enforced.extensions?.enforceCredentialProtectionPolicy = true
        await expectUnsupported(naming: "credentialProtectionPolicy") { try await client.createCredential(enforced) }
        await expectUnsupported(naming: "allowCredentials") { try await client.getCredential(WebAuthnFixtures.getParams()) }
        await expectUnsupported(naming: "userVerification") {
            try await client.getCredential(WebAuthnFixtures.getParams(allow: ["AQID"], userVerification: .required))
        }
        // U2F signs only after a touch: no signature without one.
        var untouched = WebAuthnFixtures.getParams(allow: ["AQID"])
        untouched.userPresence = false
        await expectUnsupported(naming: "userPresence") { try await client.getCredential(untouched) }
        #expect(!ui.statusLog.contains(.waitingForTouch), "refused before the key was asked")
        await expectUnsupported(naming: ManagementMethod.setPin) { try await client.setPIN(on: "v1") }
        await expectUnsupported(naming: ManagementMethod.changePin) { try await client.changePIN(on: "v1") }
        await expectUnsupported(naming: ManagementMethod.listCredentials) { try await client.storedCredentials(on: "v1") }
        await expectUnsupported(naming: ManagementMethod.reset) { try await client.reset("v1", confirm: "U2F") }
    }

    @Test func extensionsAU2FKeyCannotProcessAreDroppedAsABrowserDrops() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=U2F,ctap=u2f"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let challenge = randomHash()
        var params = WebAuthnFixtures.createParams(challenge: challenge, residentKey: .preferred, userVerification: .preferred)
        params.extensions = CreateExtensions()
        params.extensions?.credProps = true
        params.extensions?.hmacCreateSecret = true
        params.extensions?.credBlob = Base64URLBytes([1, 2, 3])
        params.extensions?.minPinLength = true
        params.extensions?.credentialProtectionPolicy = "userVerificationRequired"
        let created = try await client.createCredential(params)
        let results = created.credential["clientExtensionResults"]
        #expect(results?["credProps"]?["rk"] == false)
        #expect(results?["hmacCreateSecret"] == false)
        #expect(results?["credBlob"] == false)
        let registered = try await RelyingPartyVerifier.verifying("register", [
            "credential": created.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": "https://example.org", "rpId": "example.org",
        ]).get()
        #expect(registered["format"] == "none", "attestation none: the statement replaced, as browsers do")

        var get = WebAuthnFixtures.getParams(allow: [registered["credentialId"]!.stringValue!])
        get.extensions = GetExtensions()
        get.extensions?.getCredBlob = true
        let assertion = try await client.getCredential(get)
        #expect(assertion.credential["clientExtensionResults"] == [:], "getCredBlob left out")
    }

    @Test func cancellingAWaitForATouchFreesTheKeyWithinAPoll() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=U2F,ctap=u2f,presence=never"])
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        let started = ContinuousClock.now
        let cancelled = await failure {
            try await client.createCredential(WebAuthnFixtures.createParams()) { id in
                Task { try? await Task.sleep(for: .milliseconds(300)); try? await client.cancel(requestID: id) }
            }
        }
        #expect(cancelled?.reason == .cancelled, "\(String(describing: cancelled))")
        // The next request has the key within one poll slice, and times out on its own.
        var next = WebAuthnFixtures.createParams()
        next.timeout = 1500
        let second = ContinuousClock.now
        let timedOut = await failure { try await client.createCredential(next) }
        #expect(timedOut?.reason == .timeout, "\(String(describing: timedOut))")
        #expect(ContinuousClock.now - second < .seconds(4))
        #expect(ContinuousClock.now - started < .seconds(6))
    }
}

extension U2FOnlyKeyTests {
    /// Beside a FIDO2 key, the U2F key is not offered for what it cannot
    /// do, and both are offered for what it can.
    @Test func aU2FKeyBesideAFIDO2KeyIsOfferedOnlyForWhatItCanDo() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=FIDO2 Key", "--virtual-key", "name=U2F Key,ctap=u2f"])
        let keys = try await daemon.listKeys()
        #expect(keys.map(\.ctap) == [.fido2, .u2f])
        let client = try daemon.client()
        let ui = ScriptedUI(choice: .authenticator(id: "v2"))
        client.setUI(ui)
        // A passkey: only the FIDO2 key can hold it, so nobody is asked to choose.
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        _ = try await client.getCredential(WebAuthnFixtures.getParams())
        #expect(ui.offeredKeys.isEmpty, "offered: \(ui.offeredKeys)")
        // A plain registration: both are offered, and the U2F key is chosen.
        let created = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(ui.offeredKeys.last?.map(\.id) == ["v1", "v2"])
        #expect(created.registration?.aaguid == "00000000-0000-0000-0000-000000000000", "made by the U2F key")
        // Asked for it by id: the FIDO2 key says silently that it holds
        // none, so the U2F key is the only one left, and nobody is asked.
        let offeredBefore = ui.offeredKeys.count
        let id = try #require(created.registration?.id)
        let assertion = try await client.getCredential(WebAuthnFixtures.getParams(allow: [id]))
        #expect(WebAuthnFixtures.credentialID(of: assertion.credential).map(Base64URL.encode) == id)
        #expect(ui.offeredKeys.count == offeredBefore)
    }

    /// A U2F key that loses a touch-to-select race has answered polls that
    /// nobody reads any more; none of them may be taken for the answer to
    /// its next request.
    @Test func aU2FKeyThatLostATouchRaceServesItsNextRequest() async throws {
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=FIDO2 Key,presence=after:300ms", "--virtual-key", "name=U2F Key,ctap=u2f,presence=after:2500ms",
        ])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        #expect(try await client.selectByTouch(timeout: .seconds(10)).id == "v1")
        try await U2FChecks.registerAndAuthenticate(client, key: "v2")
    }
}
