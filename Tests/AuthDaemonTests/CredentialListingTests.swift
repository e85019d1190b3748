import AuthClient
import AuthProtocol
import BrokerTestSupport
import CBOR
import Glibc
import TestSupport
import Testing

/// `authenticators.credentials.list` as `ssh-keygen -K` needs it (through
/// OpenSSH's provider): each credential with its public key, and open to
/// every user of the keys, not only admins. The public keys are compared
/// with the ones the registrations attested.
@Suite(.timeLimit(.minutes(2))) struct CredentialListingTests {
    static func residentParams(user: String, algorithm: Int) -> CreateParams {
        var params = WebAuthnFixtures.createParams(user: user, userID: Array("user-\(user)".utf8), residentKey: .required)
        params.pubKeyCredParams = [.init(alg: algorithm)]
        return params
    }

    @Test func eachListedCredentialCarriesThePublicKeyItsRegistrationAttested() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=K,pin=1234"])
        let client = try daemon.client()
        client.setUI(ScriptedUI(pins: ["1234", "1234", "1234"]))
        var attested: [String: (key: CBOR, algorithm: Int)] = [:]
        for (user, algorithm) in [("alice", -7), ("bob", -8)] {
            let created = try await client.createCredential(Self.residentParams(user: user, algorithm: algorithm))
            let id = try #require(created.credential["id"]?.stringValue)
            attested[id] = (try #require(CredentialKeys.attestedPublicKey(of: created)), algorithm)
        }

        let listing = try await client.storedCredentials(on: "v1", rpId: "example.org")
        let credentials = try #require(listing.relyingParties.first?.credentials)
        #expect(Set(credentials.map(\.credentialId)) == Set(attested.keys))
        for credential in credentials {
            let expected = try #require(attested[credential.credentialId])
            let listed = try #require(credential.publicKey?.bytes, "\(credential.credentialId) has no publicKey")
            #expect(try CBOR.decode(listed) == expected.key, "the COSE_Key of \(credential.user.name ?? "?")")
            #expect(credential.publicKeyAlgorithm == expected.algorithm)
        }
    }

    /// `ssh-keygen -K` with a key without a PIN beside the one with the
    /// resident key: a listing that names no key lists the one key that
    /// can (credential management needs its PIN), without asking which.
    @Test func aListingNamingNoKeyUsesTheOnlyKeyThatCanListWithoutAsking() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=No PIN", "--virtual-key", "name=With PIN,pin=1234"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["1234", "1234"])
        client.setUI(ui)
        var params = Self.residentParams(user: "alice", algorithm: -7)
        params.authenticator = "v2"
        let id = try #require(try await client.createCredential(params).credential["id"]?.stringValue)

        let listing = try await client.storedCredentials(on: nil)
        #expect(listing.authenticator?.id == "v2", "the key listed is named in the result")
        #expect(listing.relyingParties.first?.credentials.map(\.credentialId) == [id])
        #expect(!ui.prompts.contains("select"), "prompts: \(ui.prompts)")
        #expect(ui.pinRequests.count == 2, "the PIN asked to register and to list")
    }

    /// With several keys that can list, the user picks among those only.
    @Test func withSeveralKeysThatCanListOnlyThoseAreOffered() async throws {
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=No PIN", "--virtual-key", "name=First PIN,pin=1234", "--virtual-key", "name=Second PIN,pin=1234",
        ])
        let client = try daemon.client()
        let ui = ScriptedUI(choice: .authenticator(id: "v3"), pins: ["1234"])
        client.setUI(ui)
        let listing = try await client.storedCredentials(on: nil)
        #expect(listing.authenticator?.id == "v3" && listing.existing == 0)
        #expect(ui.offeredKeys.map { $0.map(\.id) } == [["v2", "v3"]])
    }

    /// With no key that can list, the reason says which keys want a PIN.
    @Test func withNoKeyThatCanListTheReasonSaysToSetAPIN() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=No PIN", "--virtual-key", "name=No PIN either"])
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        await expectReason(.unsupported, containing: "no key present can list its credentials") {
            try await client.storedCredentials(on: nil)
        }
        await expectReason(.unsupported, containing: "v1 \"No PIN\", v2 \"No PIN either\" have none; set one") {
            try await client.storedCredentials(on: nil)
        }
        #expect(ui.prompts.isEmpty, "no key was offered: \(ui.prompts)")
        // A key named still says its own reason, as before.
        await expectReason(.pinRequired) { try await client.storedCredentials(on: "v1") }
    }

    @Test func aUserWhoIsNotAnAdminListsTheCredentialsButChangesNone() async throws {
        // This process is the only user; uid 65534 the only admin.
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=K,pin=1234", "--allow-users", "\(getuid())", "--allow-admins", "65534",
        ])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["1234", "1234", "1234"])
        client.setUI(ui)
        #expect(try await client.hello(client: "test").canManage == false)
        let created = try await client.createCredential(Self.residentParams(user: "alice", algorithm: -7))
        let id = try #require(created.registration?.id)

        let listing = try await client.storedCredentials(on: "v1")
        let listed = try #require(listing.relyingParties.first?.credentials.first)
        #expect(listed.credentialId == id)
        #expect(listed.registration?.id == id, "the caller's own record beside it")
        #expect(ui.pinRequests.count == 2, "the key asked for its PIN, to register and to list")

        await expectReason(.permissionDenied) { try await client.deleteStoredCredential(id, on: "v1") }
        await expectReason(.permissionDenied) {
            try await client.updateStoredCredentialUser(
                id, on: "v1", user: .init(id: Base64URLBytes(Array("user-alice".utf8)), name: "eve", displayName: "Eve"))
        }
        await expectReason(.permissionDenied) { try await client.changePIN(on: "v1") }
        await expectReason(.permissionDenied) { try await client.reset("v1", confirm: "K") }
        #expect(try await client.storedCredentials(on: "v1").existing == 1, "still there")
    }
}
