import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
import Testing

/// The one-call client authctl's list and info use: it must read what
/// `AuthClient` reads, past notifications and prompts.
@Suite struct BlockingClientTests {
    @Test func itListsWhatAuthClientLists() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue", "--virtual-key", "name=Green"])
        let blocking = try daemon.blockingClient()
        let result = try blocking.call(Method.listAuthenticators)
        let keys = try blocking.decode(AuthenticatorList.self, of: Method.listAuthenticators, from: result).authenticators
        #expect(keys.map(\.product) == ["Blue", "Green"])
        #expect(try await daemon.client().listAuthenticators() == keys)
    }

    @Test func itDeclinesPromptsAndSkipsNotificationsOnTheWayToItsAnswer() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let blocking = try daemon.blockingClient()
        // A registration sends operation.status notifications, then asks for
        // the key's name (ui.describeAuthenticator) before it answers.
        let params = try JSONValueEncoder().encode(WebAuthnFixtures.createParams(authenticator: "v1"))
        let registered = try blocking.call(Method.createCredential, params: params)
        #expect(registered["credential"]?["id"]?.stringValue?.isEmpty == false, "\(registered)")
        // The name was declined: the key has none.
        let listed = try blocking.call(Method.listAuthenticators)
        let key = listed["authenticators"]?.arrayValue?.first
        #expect(key?["id"] == "v1")
        #expect(key?["name"] == nil, "\(listed)")
    }

    @Test func theDaemonsErrorIsThrownWithItsReason() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let blocking = try daemon.blockingClient()
        do {
            _ = try blocking.call(Method.authenticatorInfo, params: ["authenticator": "v9"])
            Issue.record("info on a key that is not there answered")
        } catch {
            #expect(error.reason == .noAuthenticator)
        }
        // The connection still serves the next call.
        #expect(try blocking.call(Method.listAuthenticators)["authenticators"]?.arrayValue?.first?["id"] == "v1")
    }
}
