import AuthClient
import AuthProtocol
import BrokerTestSupport
import FIDO2
import Foundation
import SystemKit
import TestSupport
import Testing

/// Key management through the broker in process (moved from EndToEndTests,
/// which keeps the PIN test that reads authkeyd's log and the one run as
/// another uid): reset, the credentials on a key, fingerprints, config.
/// What a call changed on a key is checked on the key itself, through
/// libfido2 on its state file once the broker has stopped, not through the
/// broker's word.
@Suite(.timeLimit(.minutes(3))) struct ManagementTests {
    /// Where the key keeps its state, for as long as the test runs.
    let directory = TemporaryDirectory(prefix: "authkeyd")

    /// A broker serving one virtual key `K1` (`spec` adds settings) kept in a state file.
    func daemon(_ spec: String = "", arguments: [String] = []) async throws -> (InProcessBroker, state: String) {
        let state = directory.file("key.state")
        let daemon = try await InProcessBroker(["--virtual-key", "name=K1,state=\(state)\(spec.isEmpty ? "" : ",")\(spec)"] + arguments)
        return (daemon, state)
    }

    @Test func resetWithinTheWindowErasesTheKey() async throws {
        let (daemon, state) = try await daemon("pin=1234")
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234"]))
        let credential = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        let credentialID = try #require(WebAuthnFixtures.credentialID(of: credential.credential))

        await expectReason(.invalidParams) { try await client.reset("v1", confirm: "k1") }
        let statuses = Protected<[OperationStatus.Status]>([])
        let key = try await client.reset("v1", confirm: "K1") { status in statuses.withLock { $0.append(status.status) } }
        #expect(!key.pinSet)
        #expect(statuses.withLock { $0 } == [.waitingForTouch])
        await daemon.stop()

        let device = try openKey(state: state)
        #expect(!device.hasPIN)
        #expect(throws: FIDO2Error.noCredentials) { try device.getAssertion(assertionRequest(allow: [credentialID])) }
    }

    @Test func resetOutsideTheWindowIsRefusedWithTheReason() async throws {
        let (daemon, state) = try await daemon("pin=1234,reset-window=200ms")
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234"]))
        let credential = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        let credentialID = try #require(WebAuthnFixtures.credentialID(of: credential.credential))
        try await Task.sleep(for: .milliseconds(300))

        do {
            _ = try await client.reset("v1", confirm: "K1")
            Issue.record("the reset outside the window succeeded")
        } catch {
            #expect(error.reason == .notAllowed)
            #expect("\(error)".contains("plug it back in"), "\(error)")
        }
        await daemon.stop()

        let device = try openKey(state: state)
        #expect(device.hasPIN)
        #expect(try device.getAssertion(assertionRequest(allow: [credentialID]), pin: "1234").count == 1)
    }

    @Test func listUpdateAndDeleteTheCredentialsOnTheKey() async throws {
        let (daemon, state) = try await daemon("pin=1234")
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234"], name: "Desk key"))
        let alice = try await client.createCredential(
            WebAuthnFixtures.createParams(user: "alice", userID: Array("user-alice".utf8), residentKey: .required))
        client.setUI(ScriptedUI(pins: ["1234"]))
        let bob = try await client.createCredential(
            WebAuthnFixtures.createParams(user: "bob", userID: Array("user-bob".utf8), residentKey: .required))
        let aliceID = try #require(alice.registration?.id), bobID = try #require(bob.registration?.id)

        let ui = ScriptedUI(pins: ["1234", "1234", "1234", "1234", "1234"])
        client.setUI(ui)
        let listing = try await client.storedCredentials(on: "v1")
        #expect(listing.existing == 2)
        let party = try #require(listing.relyingParties.first)
        #expect(listing.relyingParties.map(\.id) == ["example.org"])
        #expect(Set(party.credentials.map(\.credentialId)) == [aliceID, bobID])
        #expect(party.credentials.first { $0.credentialId == aliceID }?.registration?.friendlyName == "Desk key")
        #expect(party.credentials.first { $0.credentialId == bobID }?.user.name == "bob")

        try await client.deleteStoredCredential(aliceID, on: "v1")
        try await client.updateStoredCredentialUser(
            bobID, on: "v1", user: .init(id: Base64URLBytes(Array("user-bob".utf8)), name: "robert", displayName: "Robert"))
        // The user id is the relying party's; a key refuses to change it.
        await expectReason(.invalidParams) {
            try await client.updateStoredCredentialUser(
                bobID, on: "v1", user: .init(id: Base64URLBytes(Array("user-eve".utf8)), name: "eve", displayName: "Eve"))
        }
        let after = try await client.storedCredentials(on: "v1", rpId: "example.org")
        #expect(after.relyingParties.first?.credentials.map(\.credentialId) == [bobID])
        #expect(try await client.listRegistrations().map(\.id) == [bobID], "the daemon's record of alice went with her credential")
        #expect(ui.pinRequests.map(\.reason) == [.required, .required, .required, .required, .required])
        await daemon.stop()

        // Listed again through libfido2, on the key.
        let stored = try openKey(state: state).storedCredentials(relyingPartyID: "example.org", pin: "1234")
        #expect(stored.map { Base64URL.encode($0.credentialID) } == [bobID])
        #expect(stored.first?.user.name == "robert")
        #expect(stored.first?.user.displayName == "Robert")
    }

    @Test func enrollAFingerprintWithProgressThenVerifyWithIt() async throws {
        let (daemon, state) = try await daemon("pin=1234,uv=match")
        let client = try daemon.client()
        let sensor = try await client.fingerprintSensor(on: "v1")
        #expect(sensor.samplesRequired > 1)

        let enrolling = ScriptedUI(pins: ["1234", "1234"])
        client.setUI(enrolling)
        let progress = Protected<[OperationStatus]>([])
        let enrolled = try await client.enrollFingerprint(on: "v1", name: "Right thumb") { status in
            progress.withLock { $0.append(status) }
        }
        #expect(enrolled.name == "Right thumb")
        #expect(enrolling.pinRequests.count == 1, "one PIN enrolls and names the finger")
        let captured = progress.withLock { $0 }.filter { $0.status == .sampleCaptured }
        #expect(captured.compactMap(\.remainingSamples) == Array((0..<sensor.samplesRequired).reversed()))
        #expect(progress.withLock { $0 }.filter { $0.status == .waitingForTouch }.count == sensor.samplesRequired, "one a sample")
        #expect(try await client.listAuthenticators().first?.uvSet == true)

        // The finger, not the PIN, verifies the user now.
        let ui = ScriptedUI()
        client.setUI(ui)
        let registered = try await client.createCredential(WebAuthnFixtures.createParams(userVerification: .required))
        let assertion = try await client.getCredential(
            WebAuthnFixtures.getParams(allow: [try #require(registered.registration?.id)], userVerification: .required))
        #expect(ui.pinRequests.isEmpty)
        #expect(ui.statusLog.contains(.waitingForUv))
        let authenticatorData = try #require(
            assertion.credential["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
        #expect(authenticatorData[32] & 0x04 != 0, "UV flag")

        client.setUI(ScriptedUI(pins: Array(repeating: "1234", count: 8)))
        #expect(try await client.fingerprints(on: "v1") == [enrolled])
        // An unnamed finger is listed without a name, though the key sends an empty one.
        let unnamed = try await client.enrollFingerprint(on: "v1")
        #expect(try await client.fingerprints(on: "v1").map(\.name) == ["Right thumb", nil])
        try await client.deleteFingerprint(unnamed.templateId, on: "v1")
        _ = try await client.renameFingerprint(enrolled.templateId, on: "v1", to: "Left thumb")
        #expect(try await client.fingerprints(on: "v1").map(\.name) == ["Left thumb"])
        try await client.deleteFingerprint(enrolled.templateId, on: "v1")
        #expect(try await client.listAuthenticators().first?.uvSet == false)
        await daemon.stop()
        #expect(try openKey(state: state).bioTemplates(pin: "1234").isEmpty)
    }

    @Test func alwaysUVMakesEveryAssertionVerifyTheUser() async throws {
        let (daemon, _) = try await daemon("pin=1234,fingerprint=no")
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let registered = try await client.createCredential(WebAuthnFixtures.createParams(userVerification: .discouraged))
        let id = try #require(registered.registration?.id)

        client.setUI(ScriptedUI(pins: ["1234"]))
        #expect(try await client.setAlwaysUV(true, on: "v1").alwaysUv)
        let ui = ScriptedUI(pins: ["1234"])
        client.setUI(ui)
        let assertion = try await client.getCredential(WebAuthnFixtures.getParams(allow: [id], userVerification: .discouraged))
        #expect(ui.pinRequests.map(\.reason) == [.required])
        let flags = try #require(assertion.credential["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))[32]
        #expect(flags & 0x04 != 0, "UV flag")

        client.setUI(ScriptedUI(pins: ["1234"]))
        #expect(try await client.setAlwaysUV(false, on: "v1").alwaysUv == false)
        let presenceOnly = ScriptedUI()
        client.setUI(presenceOnly)
        _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: [id], userVerification: .discouraged))
        #expect(presenceOnly.pinRequests.isEmpty)
    }

    @Test func aLongerMinimumPINLengthForcesTheNextPINToFollowIt() async throws {
        let (daemon, _) = try await daemon("pin=1234")
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234"]))
        let key = try await client.setMinimumPINLength(6, on: "v1", forceChange: true)
        #expect(key.pinSet)
        let details = try await client.authenticatorInfo("v1")
        #expect(details.info.minPinLength == 6)
        #expect(details.info.forcePinChange == true)
        await expectReason(.notAllowed) { try await client.setMinimumPINLength(5, on: "v1") }

        // The old PIN is now too short: "12345" is refused before the key sees it.
        let changing = ScriptedUI(pins: ["1234", "12345", "123456"])
        client.setUI(changing)
        _ = try await client.changePIN(on: "v1")
        #expect(changing.pinRequests.map(\.reason) == [.current, .new, .newRejected])
        #expect(try await client.authenticatorInfo("v1").info.forcePinChange == false)
    }
}
