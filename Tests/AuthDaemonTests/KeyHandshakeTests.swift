import AuthClient
import AuthProtocol
import BrokerTestSupport
import FIDO2
import Foundation
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// Register and authenticate through the broker in process with the UI
/// handshake, on keys of their own (moved from EndToEndTests.HandshakeTests,
/// which keeps what needs a restart, a SIGKILL or another uid): what ends up
/// on a key is checked through the key itself, opened with libfido2 from its
/// state file once the broker has stopped.
@Suite(.timeLimit(.minutes(3))) struct KeyHandshakeTests {
    /// Where the keys keep their state, for as long as the test runs.
    let directory = TemporaryDirectory(prefix: "authkeyd")

    @Test func theUserPicksTheSecondKeyAndTheCredentialLivesOnIt() async throws {
        let first = directory.file("first.state"), second = directory.file("second.state")
        let daemon = try await InProcessBroker(
            ["--virtual-key", "name=First,state=\(first)", "--virtual-key", "name=Second,state=\(second)"])
        let client = try daemon.client()
        let ui = ScriptedUI(choice: .authenticator(id: "v2"), name: "My second key")
        client.setUI(ui)
        let result = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        #expect(ui.prompts == ["select", "describe"])
        #expect(ui.offeredKeys.first?.map(\.product) == ["First", "Second"])
        #expect(ui.statusLog.contains(.waitingForTouch))
        #expect(result.registration?.friendlyName == "My second key")
        #expect(result.registration?.authenticatorProduct == "Second")
        #expect(try await client.listAuthenticators().first { $0.id == "v2" }?.name == "My second key")
        let credentialID = try #require(WebAuthnFixtures.credentialID(of: result.credential))
        await daemon.stop()

        // The key itself, not the daemon's word.
        #expect(try openKey(state: second).getAssertion(assertionRequest(allow: [credentialID])).count == 1)
        #expect(throws: FIDO2Error.noCredentials) { try openKey(state: first).getAssertion(assertionRequest(allow: [credentialID])) }
    }

    @Test func cancellingEachPromptEndsTheOperationWithNothingMade() async throws {
        let a = directory.file("a.state"), b = directory.file("b.state")
        let daemon = try await InProcessBroker(
            ["--virtual-key", "name=A,pin=1234,state=\(a)", "--virtual-key", "name=B,state=\(b)"])
        let client = try daemon.client()

        // ui.selectAuthenticator → cancel.
        client.setUI(ScriptedUI(choice: nil))
        await expectReason(.cancelled) { try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required)) }
        // ui.enterPin → cancel.
        client.setUI(ScriptedUI(choice: .authenticator(id: "v1"), pins: [nil]))
        await expectReason(.cancelled) { try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required)) }

        // ui.describeAuthenticator → cancel: the registration stands, unnamed.
        client.setUI(ScriptedUI(choice: .authenticator(id: "v2"), name: nil))
        let unnamed = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(unnamed.registration != nil && unnamed.registration?.friendlyName == nil)
        let id = try #require(unnamed.registration?.id)

        // ui.confirmTransaction → cancel: nothing is signed. (The key is
        // named, so no silent probe touches its counter either.)
        let declined = ScriptedUI(confirm: false)
        client.setUI(declined)
        await expectReason(.cancelled) {
            try await client.getCredential(WebAuthnFixtures.getParams(allow: [id], authenticator: "v2", transaction: ["Pay": "100 EUR"]))
        }
        #expect(declined.prompts == ["confirm"])
        client.setUI(ScriptedUI(confirm: true))
        let signed = try await client.getCredential(
            WebAuthnFixtures.getParams(allow: [id], authenticator: "v2", transaction: ["Pay": "1 EUR"]))
        await daemon.stop()

        // On the keys: no discoverable credential from the cancelled
        // registrations, and the declined transaction used no signature.
        #expect(try openKey(state: a).credentialMetadata(pin: "1234").existing == 0)
        #expect(signed.registration?.signCount == unnamed.registration!.signCount + 1)
        #expect(try openKey(state: b).getAssertion(assertionRequest(allow: [Base64URL.decode(id)!])).statement(at: 0).signCount
            == unnamed.registration!.signCount + 2)
    }

    /// A key with a fingerprint enrolled, made before the daemon starts.
    func keyWithFingerprint(in directory: TemporaryDirectory) throws -> String {
        let state = directory.file("bio.state")
        let key = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "pin=1234,state=\(state)"))
        let (enrollment, progress) = try key.openDevice().beginBioEnrollment(pin: "1234", sampleTimeout: .seconds(5))
        var remaining = progress.remainingSamples
        while remaining > 0 { remaining = try enrollment.captureNextSample(timeout: .seconds(5)).remainingSamples }
        return state
    }

    @Test func aMatchingFingerprintVerifiesWithoutAPIN() async throws {
        let state = try keyWithFingerprint(in: directory)
        let daemon = try await InProcessBroker(["--virtual-key", "name=Bio,state=\(state)"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: [])
        client.setUI(ui)
        let result = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required, userVerification: .required))
        #expect(ui.statusLog.contains(.waitingForUv))
        #expect(!ui.prompts.contains("pin"))
        let authData = try #require(result.credential["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
        #expect(authData[32] & 0x04 != 0)
    }

    @Test func aFingerprintThatFailsFallsBackToThePIN() async throws {
        let state = try keyWithFingerprint(in: directory)
        let daemon = try await InProcessBroker(["--virtual-key", "name=Bio,uv=nomatch,state=\(state)"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["1234"])
        client.setUI(ui)
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required, userVerification: .required))
        #expect(ui.statusLog.filter { $0 == .waitingForUv }.count == 3)
        #expect(ui.prompts.contains("pin"))
        #expect(ui.pinRequests.first?.reason == .required)
    }

    @Test func aConfirmedTransactionVerifiesWithARelyingPartyLibrary() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=RP key"])
        let client = try daemon.client()
        client.setUI(ScriptedUI(confirm: true))
        let challenge = randomHash()
        let created = try await client.createCredential(WebAuthnFixtures.createParams(challenge: challenge, attestation: .direct))
        let registered = try await RelyingPartyVerifier.verifying("register", [
            "credential": created.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": "https://example.org", "rpId": "example.org",
        ]).get()
        #expect(registered["format"] == "packed")

        let details: JSONObject = ["Payee": "Bob's Bikes", "Amount": "42.00 EUR"]
        let assertionChallenge = randomHash()
        let assertion = try await client.getCredential(WebAuthnFixtures.getParams(
            challenge: assertionChallenge, allow: [registered["credentialId"]!.stringValue!], transaction: details))
        var request: JSONValue = [
            "credential": assertion.credential, "challenge": .string(Base64URL.encode(assertionChallenge)),
            "origin": "https://example.org", "rpId": "example.org", "publicKey": registered["publicKey"]!,
            "transaction": ["details": .object(details)],
        ]
        let verified = try await RelyingPartyVerifier.verifying("authenticate", request).get()
        #expect(verified["transaction"]?["details"]?["Amount"] == "42.00 EUR")

        // One detail changed in clientDataJSON: the signature no longer holds.
        let clientData = try JSONParser().parse(Base64URL.decode(assertion.credential["response"]!["clientDataJSON"]!.stringValue!)!)
        guard case .object(var tampered) = clientData else {
            Issue.record("clientDataJSON is not an object")
            return
        }
        tampered["transaction"] = ["details": ["Payee": "Bob's Bikes", "Amount": "4200.00 EUR"]]
        guard case .object(var credential) = assertion.credential, case .object(var response)? = credential["response"] else { return }
        response["clientDataJSON"] = .string(Base64URL.encode(JSONValue.object(tampered).serialized()))
        credential["response"] = .object(response)
        request = ["credential": .object(credential), "challenge": .string(Base64URL.encode(assertionChallenge)),
                   "origin": "https://example.org", "rpId": "example.org", "publicKey": registered["publicKey"]!]
        let tamperedRequest = request
        await #expect(throws: RelyingPartyVerifier.VerificationFailure.self) {
            try await RelyingPartyVerifier.verifying("authenticate", tamperedRequest).get()
        }
    }

    @Test func clientsOnOneKeyAreServedInOrderAndTwoKeysServeInParallel() async throws {
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=Slow one,presence=after:1500ms", "--virtual-key", "name=Quick two,presence=after:300ms",
        ])
        let clock = ContinuousClock()
        let started = clock.now
        func register(on key: String, ui: ScriptedUI) async throws -> Duration {
            let client = try daemon.client()
            client.setUI(ui)
            _ = try await client.createCredential(WebAuthnFixtures.createParams(authenticator: key))
            return clock.now - started
        }
        let first = ScriptedUI(), second = ScriptedUI(), parallel = ScriptedUI()
        async let a = register(on: "v1", ui: first)
        // The second client asks once the first holds the key.
        while !first.statusLog.contains(.waitingForTouch) { try await Task.sleep(for: .milliseconds(5)) }
        async let b = register(on: "v1", ui: second)
        async let c = register(on: "v2", ui: parallel)
        let (timeA, timeB, timeC) = try await (a, b, c)
        #expect(timeA < timeB, "first come, first served")
        #expect(timeB >= .milliseconds(3000), "the second waited for the first's touch, then its own")
        #expect(second.statusLog.first == .queued)
        #expect(timeC < timeB, "the other key did not wait for the first")
        #expect(!parallel.statusLog.contains(.queued))
    }
}
