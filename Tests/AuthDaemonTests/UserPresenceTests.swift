import AuthClient
import AuthProtocol
import BrokerTestSupport
import CBOR
import TestSupport
import Testing

/// `credentials.get` with authkeyd's `userPresence: false`: the key signs
/// without a touch (CTAP up=false), as OpenSSH asks for keys made with
/// `no-touch-required`. The key's simulated user never touches it
/// (`presence=never`), so a signature at all proves no touch was waited
/// for; the UP flag and the signature are read from the result by hand.
@Suite(.timeLimit(.minutes(2))) struct UserPresenceTests {
    let directory = TemporaryDirectory(prefix: "authkeyd-presence")

    /// Registers one credential on a key kept in a state file (touched at
    /// once), then serves the same key again with `spec` added: a key whose
    /// user no longer touches it. Returns the second broker, the credential
    /// id and the public key the registration attested.
    func registeredThenUntouched(
        _ spec: String = "", pins: [String?] = []
    ) async throws -> (InProcessBroker, credentialID: String, publicKey: CBOR) {
        let state = directory.file("key.state")
        let prefix = spec.isEmpty ? "" : "," + spec
        let first = try await InProcessBroker(["--virtual-key", "name=K,state=\(state)\(prefix)"])
        let client = try first.client()
        client.setUI(ScriptedUI(pins: pins))
        let created = try await client.createCredential(WebAuthnFixtures.createParams())
        let id = try #require(created.credential["id"]?.stringValue)
        let publicKey = try #require(CredentialKeys.attestedPublicKey(of: created))
        client.close()
        await first.stop()
        // The key gives up waiting for the touch itself (USER_ACTION_TIMEOUT),
        // long before the request's own timeout.
        let second = try await InProcessBroker(["--virtual-key", "name=K,state=\(state),presence=never,presence-timeout=300ms\(prefix)"])
        return (second, id, publicKey)
    }

    static func params(allow id: String, hash: [UInt8], presence: Bool?, userVerification: UserVerificationRequirement? = nil) -> GetParams {
        var params = WebAuthnFixtures.getParams(allow: [id], userVerification: userVerification)
        params.challenge = nil
        params.clientDataHash = Base64URLBytes(hash)
        params.userPresence = presence
        return params
    }

    @Test func withoutPresenceTheKeySignsUntouchedWithTheUPFlagClear() async throws {
        let (daemon, id, publicKey) = try await registeredThenUntouched()
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        let hash = randomHash()
        let asserted = try await client.getCredential(Self.params(allow: id, hash: hash, presence: false))
        let flags = try #require(CredentialKeys.flags(of: asserted))
        #expect(flags & 0x01 == 0, "UP clear: flags \(flags)")
        #expect(flags & 0x04 == 0, "UV clear: nobody was verified")
        #expect(CredentialKeys.signatureVerifies(asserted, clientDataHash: hash, publicKey: publicKey))
        #expect(!CredentialKeys.signatureVerifies(asserted, clientDataHash: randomHash(), publicKey: publicKey),
            "the check can fail")
        #expect(!ui.statusLog.contains(.waitingForTouch), "no touch cue for a request that needs no touch: \(ui.statusLog)")
    }

    @Test func withPresenceAsBeforeTheUntouchedKeyTimesOut() async throws {
        let (daemon, id, _) = try await registeredThenUntouched()
        let client = try daemon.client()
        for presence in [true, nil] as [Bool?] {
            let ui = ScriptedUI()
            client.setUI(ui)
            await expectReason(.timeout) {
                try await client.getCredential(Self.params(allow: id, hash: randomHash(), presence: presence))
            }
            #expect(ui.statusLog.contains(.waitingForTouch), "userPresence \(String(describing: presence)): \(ui.statusLog)")
        }
    }

    @Test func withoutPresenceAVerifiedAssertionAsksThePINButNoTouch() async throws {
        let (daemon, id, publicKey) = try await registeredThenUntouched("pin=1234", pins: ["1234"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["1234"])
        client.setUI(ui)
        let hash = randomHash()
        let asserted = try await client.getCredential(
            Self.params(allow: id, hash: hash, presence: false, userVerification: .required))
        let flags = try #require(CredentialKeys.flags(of: asserted))
        #expect(flags & 0x01 == 0 && flags & 0x04 != 0, "UP clear, UV set: flags \(flags)")
        #expect(CredentialKeys.signatureVerifies(asserted, clientDataHash: hash, publicKey: publicKey))
        #expect(ui.pinRequests.count == 1)
        #expect(!ui.statusLog.contains(.waitingForTouch), "\(ui.statusLog)")
    }

    @Test func withoutPresenceHMACSecretIsUnsupportedBeforeTheKeyIsAsked() async throws {
        let (daemon, id, _) = try await registeredThenUntouched()
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        var params = Self.params(allow: id, hash: randomHash(), presence: false)
        params.extensions = GetExtensions()
        params.extensions?.prf = PRFInputs(eval: PRFValues(first: Array("salt".utf8)))
        await expectReason(.unsupported) { try await client.getCredential(params) }
        #expect(ui.statusLog.isEmpty, "\(ui.statusLog)")
    }
}
