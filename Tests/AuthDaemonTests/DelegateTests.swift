import AuthClient
import AuthProtocol
import BrokerTestSupport
import Foundation
import TestSupport
import Testing

/// A client written against the TGFFido2UiDelegate-shaped protocol:
/// completion handlers, called from wherever the UI decides.
final class RecordingDelegate: AuthenticatorUIDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var calls: [String] = []
    let chosen: String
    let name: String

    init(choose chosen: String, name: String) {
        self.chosen = chosen
        self.name = name
    }

    private func note(_ call: String) { lock.withLock { calls.append(call) } }

    func showAuthenticators(
        _ authenticators: [Authenticator], operation: OperationInfo,
        selectionHandler: @escaping @Sendable (AuthenticatorChoice) -> Void, cancelHandler: @escaping @Sendable () -> Void
    ) {
        note("showAuthenticators \(authenticators.map(\.id).joined(separator: ","))")
        // Answered later, from another thread, as a UI would; twice, to
        // show only the first answer counts.
        let chosen = chosen
        runLater(after: .milliseconds(20)) {
            selectionHandler(.authenticator(id: chosen))
            cancelHandler()
        }
    }

    func enterPIN(
        for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?,
        pinHandler: @escaping @Sendable (String) -> Void, cancelHandler: @escaping @Sendable () -> Void
    ) {
        note("enterPIN")
        cancelHandler()
    }

    func showTransactionDetails(
        _ transaction: Transaction, operation: OperationInfo, proceedHandler: @escaping @Sendable () -> Void,
        cancelHandler: @escaping @Sendable () -> Void
    ) {
        note("showTransactionDetails \(transaction.details.keys.joined(separator: ","))")
        proceedHandler()
    }

    func retrieveAuthenticatorDescription(
        for authenticator: Authenticator, operation: OperationInfo, suggestion: String?,
        completionHandler: @escaping @Sendable (String?) -> Void
    ) {
        note("retrieveAuthenticatorDescription \(suggestion ?? "-")")
        completionHandler(name)
    }

    func operationStatusChanged(_ status: OperationStatus) {
        note("status \(status.status.rawValue)")
    }
}

/// (Moved from EndToEndTests: the broker runs in process.)
@Suite(.timeLimit(.minutes(2))) struct DelegateTests {
    @Test func aCompletionHandlerDelegateDrivesTheHandshake() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=One", "--virtual-key", "name=Two"])
        let client = try daemon.client()
        let delegate = RecordingDelegate(choose: "v2", name: "Delegate's key")
        client.setUI(DelegateAdapter(delegate))
        let created = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(created.registration?.friendlyName == "Delegate's key")
        #expect(created.registration?.authenticatorProduct == "Two")
        let id = try #require(created.registration?.id)
        _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: [id], transaction: ["Amount": "5", "To": "Carol"]))
        let calls = delegate.calls
        #expect(calls.contains("showAuthenticators v1,v2"))
        #expect(calls.contains("retrieveAuthenticatorDescription Two"))
        #expect(calls.contains("showTransactionDetails Amount,To"))
        #expect(calls.contains("status waitingForTouch"))
        #expect(!calls.contains("enterPIN"))
        // The get found the credential on v2 alone: no choice to make.
        #expect(calls.filter { $0.hasPrefix("showAuthenticators") }.count == 1)
    }
}
