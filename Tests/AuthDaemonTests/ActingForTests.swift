import AuthClient
import AuthProtocol
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

        params.onBehalfOf = "no-such-user-authkeyd"
        do {
            _ = try await client.getCredential(params)
            Issue.record("acting for a user who does not exist was allowed")
        } catch {
            #expect(error.reason == .invalidParams && "\(error)".contains("no user"), "\(error)")
        }
        // nobody exists, and may not use the keys (allow-users is root only).
        params.onBehalfOf = "nobody"
        do {
            _ = try await client.getCredential(params)
            Issue.record("acting for nobody was allowed")
        } catch {
            #expect(error.reason == .permissionDenied && "\(error)".contains("user nobody may not use authkeyd"), "\(error)")
        }
        // The broker served on meanwhile.
        #expect(try await client.listAuthenticators().count == 1)
    }
}
