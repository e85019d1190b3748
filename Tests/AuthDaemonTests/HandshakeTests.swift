import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
import Testing

/// The UI handshake, PIN prompts, cancelling and WebAuthn option checks,
/// against the broker in process (moved from EndToEndTests.HandshakeTests:
/// none of these needs the authkeyd binary).
@Suite(.timeLimit(.minutes(2))) struct HandshakeTests {
    @Test func aWrongPINThenTheRightOne() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=PIN key,pin=1234"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["0000", "1234"], name: "work")
        client.setUI(ui)
        let result = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        #expect(ui.pinRequests.map(\.reason) == [.required, .invalid])
        #expect(ui.pinRequests.map(\.retries) == [8, 7])
        let authData = try #require(result.credential["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
        #expect(authData[32] & 0x04 != 0, "user verified")
    }

    @Test func aBlockedPINEndsWithPinBlocked() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=PIN key,pin=1234"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["0000", "1111", "2222", "3333"])
        client.setUI(ui)
        await expectReason(.pinBlocked) { try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required)) }
        #expect(ui.pinRequests.count == 3, "the third wrong PIN in a row blocks until the key is replugged")
    }

    @Test func operationCancelStopsARegistration() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "presence=never"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let started = ContinuousClock.now
        await expectReason(.cancelled) {
            try await client.createCredential(WebAuthnFixtures.createParams()) { id in
                Task { try? await Task.sleep(for: .milliseconds(200)); try? await client.cancel(requestID: id) }
            }
        }
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func theRequestTimeoutEndsAWaitForATouch() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "presence=never", "--request-timeout", "700ms"])
        let client = try daemon.client()
        let started = ContinuousClock.now
        await expectReason(.timeout) { try await client.createCredential(WebAuthnFixtures.createParams()) }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test func badWebAuthnOptionsAreInvalidParams() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", ""])
        let client = try daemon.client()
        var wrongOrigin = WebAuthnFixtures.createParams()
        wrongOrigin.origin = "https://evil.example"
        await expectReason(.invalidParams) { try await client.createCredential(wrongOrigin) }
        var noChallenge = WebAuthnFixtures.createParams()
        noChallenge.challenge = nil
        await expectReason(.invalidParams) { try await client.createCredential(noChallenge) }
        var rsaOnly = WebAuthnFixtures.createParams()
        rsaOnly.pubKeyCredParams = [.init(alg: -257)]
        await expectReason(.unsupported) { try await client.createCredential(rsaOnly) }
        var hashAndTransaction = WebAuthnFixtures.getParams(transaction: ["a": "b"])
        hashAndTransaction.challenge = nil
        hashAndTransaction.clientDataHash = Base64URLBytes(randomHash())
        await expectReason(.invalidParams) { try await client.getCredential(hashAndTransaction) }
    }
}
