import AuthClient
import AuthProtocol
import BrokerTestSupport
import Foundation
import TestSupport
import Testing

/// The account chooser beside the extensions whose outputs belong to one
/// credential: with no allow list the key answers for every account, and
/// what comes back (the large blob read, the PRF results) must be the
/// chosen account's, the same as when that account is named in
/// allowCredentials. (Moved from EndToEndTests: the broker runs in process.)
@Suite(.timeLimit(.minutes(2))) struct AccountChooserExtensionTests {
    @Test func theChosenAccountsBlobAndPRFResultsComeBack() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=Chooser Key,pin=1234"])
        let client = try daemon.client()
        let pins = [String](repeating: "1234", count: 20)
        client.setUI(ScriptedUI(pins: pins))

        var accounts: [String: String] = [:]
        for user in ["alice", "bob"] {
            var params = WebAuthnFixtures.createParams(user: user, userID: Array("user-\(user)".utf8), residentKey: .required)
            params.extensions = CreateExtensions()
            params.extensions?.largeBlob = LargeBlobInputs(support: "required")
            params.extensions?.prf = PRFInputs()
            let created = try await client.createCredential(params)
            accounts[user] = try #require(created.credential["id"]?.stringValue)
        }
        let (alice, bob) = (try #require(accounts["alice"]), try #require(accounts["bob"]))
        let blobs = ["alice": Array("alice's blob".utf8), "bob": Array("bob's blob".utf8)]
        let prfInput = Array("the same PRF input".utf8)
        var byName: [String: PRFValues] = [:]
        for (user, id) in [("alice", alice), ("bob", bob)] {
            var write = WebAuthnFixtures.getParams(allow: [id])
            write.extensions = GetExtensions()
            write.extensions?.largeBlob = LargeBlobInputs(write: Base64URLBytes(try #require(blobs[user])))
            #expect(try await client.getCredential(write).credential["clientExtensionResults"]?["largeBlob"] == ["written": true])
            var named = WebAuthnFixtures.getParams(allow: [id], userVerification: .required)
            named.extensions = GetExtensions()
            named.extensions?.prf = PRFInputs(eval: PRFValues(first: prfInput))
            byName[user] = try #require(try await client.getCredential(named).prfOutputs?.results)
        }
        #expect(byName["alice"] != byName["bob"], "each credential has its own PRF")

        for user in ["alice", "bob"] {
            let picker = AccountPicker(pins: pins) { offered in offered.first { $0.user.name == user }?.id }
            client.setUI(picker)
            var read = WebAuthnFixtures.getParams(allow: [], userVerification: .required)
            read.extensions = GetExtensions()
            read.extensions?.largeBlob = LargeBlobInputs(read: true)
            let blobResult = try await client.getCredential(read)
            #expect(picker.offered.last?.count == 2, "both accounts were offered")
            #expect(blobResult.credential["id"]?.stringValue == accounts[user])
            #expect(blobResult.credential["clientExtensionResults"]?["largeBlob"]?["blob"]?.stringValue.flatMap(Base64URL.decode) == blobs[user])

            var prf = WebAuthnFixtures.getParams(allow: [], userVerification: .required)
            prf.extensions = GetExtensions()
            prf.extensions?.prf = PRFInputs(eval: PRFValues(first: prfInput))
            let prfResult = try await client.getCredential(prf)
            #expect(prfResult.credential["id"]?.stringValue == accounts[user])
            #expect(prfResult.prfOutputs?.results == byName[user], "the chosen account's PRF, as when it is named")
        }
    }
}
