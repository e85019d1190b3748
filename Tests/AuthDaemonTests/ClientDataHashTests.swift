import AuthClient
import AuthProtocol
import BrokerTestSupport
import Crypto
import TestSupport
import Testing

/// `clientDataHash` in the results of credentials.create and credentials.get:
/// the hash the key signed, so that a client hands the result to a CTAP-level
/// verifier (fido2-tools) without a digest of its own.
@Suite(.timeLimit(.minutes(1))) struct ClientDataHashTests {
    @Test func aRegistrationAndAnAuthenticationGiveTheHashOfTheirClientData() async throws {
        let (daemon, client) = try await Self.connected()
        defer { withExtendedLifetime(daemon) {} }
        let created = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(created.clientDataHash?.bytes == SHA256.hash(try Self.clientDataJSON(of: created)))
        let id = try #require(created.credential["id"]?.stringValue)
        let asserted = try await client.getCredential(WebAuthnFixtures.getParams(allow: [id]))
        #expect(asserted.clientDataHash?.bytes == SHA256.hash(try Self.clientDataJSON(of: asserted)))
    }

    @Test func aCallersOwnHashComesBackAsGiven() async throws {
        let (daemon, client) = try await Self.connected()
        defer { withExtendedLifetime(daemon) {} }
        let hash = randomHash()
        var params = WebAuthnFixtures.createParams()
        params.challenge = nil
        params.clientDataHash = Base64URLBytes(hash)
        let result = try await client.createCredential(params)
        #expect(result.clientDataHash?.bytes == hash)
        #expect(result.credential["response"]?["clientDataJSON"] == nil, "no client data JSON when the caller built it")
    }

    /// A broker with one virtual key, and a client with a UI that names the key.
    private static func connected() async throws -> (InProcessBroker, AuthClient) {
        let daemon = try await InProcessBroker(["--virtual-key", ""])
        let client = try daemon.client()
        client.setUI(ScriptedUI(name: "work"))
        return (daemon, client)
    }

    private static func clientDataJSON(of result: CredentialResult) throws -> [UInt8] {
        try #require(result.credential["response"]?["clientDataJSON"]?.stringValue.flatMap(Base64URL.decode))
    }
}
