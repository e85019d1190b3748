import AuthClient
import AuthProtocol
import BrokerTestSupport
import Glibc
import TestSupport
import Testing

/// `onBehalfOf` through the broker in process: the user acted for is
/// looked up (NSS) in the request's task, off the broker's queue, and the
/// answers are those it gave when the look-up was made on the queue.
@Suite(.timeLimit(.minutes(2))) struct ActingForTests {
    @Test func theUserActedForIsLookedUpAndTheirPolicyApplies() async throws {
        try #require(getuid() == 0, "the in-process client is this process: root may act for others")
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue", "--allow-users", "root"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let registration = try #require(try await client.createCredential(WebAuthnFixtures.createParams()).registration)

        var params = WebAuthnFixtures.getParams(allow: [registration.id])
        params.onBehalfOf = "root"
        let asserted = try await client.getCredential(params)
        #expect(asserted.registration?.id == registration.id, "acting for root finds root's registration")

        /// Why acting for `name` is refused.
        func refusal(actingFor name: String) async -> AuthClientError? {
            params.onBehalfOf = name
            do {
                _ = try await client.getCredential(params)
                Issue.record("acting for \(name) was allowed")
                return nil
            } catch {
                return error
            }
        }
        let unknown = await refusal(actingFor: "no-such-user-authkeyd")
        #expect(unknown?.reason == .invalidParams && String(describing: unknown).contains("no user"), "\(String(describing: unknown))")
        // nobody exists, and may not use the keys (allow-users is root only).
        let refused = await refusal(actingFor: "nobody")
        #expect(refused?.reason == .permissionDenied && String(describing: refused).contains("user nobody may not use authkeyd"), "\(String(describing: refused))")
        // The broker served on meanwhile.
        #expect(try await client.listAuthenticators().count == 1)
    }
}
