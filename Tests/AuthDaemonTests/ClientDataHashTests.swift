import AuthClient
import AuthProtocol
import Crypto
import TestSupport
import Testing

/// `clientDataHash` in the results of credentials.create and credentials.get:
/// the hash the key signed, so that a client hands the result to a CTAP-level
/// verifier (fido2-tools) without a digest of its own.
@Suite(.timeLimit(.minutes(1))) struct ClientDataHashTests {
    @Test func aRegistrationGivesTheHashOfItsClientData() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", ""])
        let client = try daemon.client()
        client.setUI(ScriptedUI(name: "work"))
        let result = try await client.createCredential(WebAuthnFixtures.createParams())
        let clientData = try #require(result.credential["response"]?["clientDataJSON"]?.stringValue.flatMap(Base64URL.decode))
        #expect(result.clientDataHash.bytes == SHA256.hash(clientData))
    }

    @Test func anAuthenticationGivesTheHashOfItsClientData() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", ""])
        let client = try daemon.client()
        client.setUI(ScriptedUI(name: "work"))
        let created = try await client.createCredential(WebAuthnFixtures.createParams())
        let id = try #require(created.credential["id"]?.stringValue)
        let result = try await client.getCredential(WebAuthnFixtures.getParams(allow: [id]))
        let clientData = try #require(result.credential["response"]?["clientDataJSON"]?.stringValue.flatMap(Base64URL.decode))
        #expect(result.clientDataHash.bytes == SHA256.hash(clientData))
    }

    @Test func aCallersOwnHashComesBackAsGiven() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", ""])
        let client = try daemon.client()
        client.setUI(ScriptedUI(name: "work"))
        let hash = randomHash()
        var params = WebAuthnFixtures.createParams()
        params.challenge = nil
        params.clientDataHash = Base64URLBytes(hash)
        let result = try await client.createCredential(params)
        #expect(result.clientDataHash.bytes == hash)
        #expect(result.credential["response"]?["clientDataJSON"] == nil, "no client data JSON when the caller built it")
    }
}
