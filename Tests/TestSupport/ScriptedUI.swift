import AuthClient
import AuthProtocol
import Foundation

/// A user who answers the daemon's prompts from a script, and remembers
/// every prompt and status it saw.
public final class ScriptedUI: AuthenticatorUI, @unchecked Sendable {
    private let lock = NSLock()
    private var pins: [String?]
    public var choice: AuthenticatorChoice?
    public var confirm: Bool
    public var name: String?
    /// Holds each prompt's answer back this long (a slow user).
    public var delay: Duration = .zero
    private(set) var events: [String] = []
    private(set) var statuses: [OperationStatus.Status] = []
    private(set) var statusNotices: [OperationStatus] = []
    private(set) var pinPrompts: [(reason: EnterPinPrompt.Reason, retries: Int?, authenticator: Authenticator)] = []
    private(set) var offered: [[Authenticator]] = []
    private(set) var transactions: [Transaction] = []

    /// `pins` answers successive PIN prompts (nil cancels; when they run out, cancel).
    public init(choice: AuthenticatorChoice? = nil, pins: [String?] = [], confirm: Bool = true, name: String? = nil) {
        self.choice = choice
        self.pins = pins
        self.confirm = confirm
        self.name = name
    }

    public var prompts: [String] { lock.withLock { events } }
    public var statusLog: [OperationStatus.Status] { lock.withLock { statuses } }
    /// Every `operation.status` as it came, with its members (`holder`, …).
    public var statusReports: [OperationStatus] { lock.withLock { statusNotices } }
    /// Each PIN prompt's reason, attempts left, and the key as it named it.
    public var pinRequests: [(reason: EnterPinPrompt.Reason, retries: Int?, authenticator: Authenticator)] { lock.withLock { pinPrompts } }
    public var offeredKeys: [[Authenticator]] { lock.withLock { offered } }
    public var confirmedTransactions: [Transaction] { lock.withLock { transactions } }

    private func note(_ event: String) { lock.withLock { events.append(event) } }

    private func wait() async {
        if delay > .zero { try? await Task.sleep(for: delay) }
    }

    public func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        note("select")
        lock.withLock { offered.append(authenticators) }
        await wait()
        return choice
    }

    public func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        note("pin")
        let answer = lock.withLock { () -> String? in
            pinPrompts.append((reason, retries, authenticator))
            return pins.isEmpty ? nil : pins.removeFirst()
        }
        await wait()
        return answer
    }

    public func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool {
        note("confirm")
        lock.withLock { transactions.append(transaction) }
        await wait()
        return confirm
    }

    public func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? {
        note("describe")
        await wait()
        return name
    }

    public func statusChanged(_ status: OperationStatus) {
        lock.withLock {
            statuses.append(status.status)
            statusNotices.append(status)
        }
    }
}

/// WebAuthn options for tests.
public enum WebAuthnFixtures {
    public static func createParams(
        rpID: String = "example.org", user: String = "alice", userID: [UInt8] = Array("user-alice".utf8),
        challenge: [UInt8] = randomHash(), residentKey: ResidentKeyRequirement? = nil,
        userVerification: UserVerificationRequirement? = nil, authenticator: String? = nil, attestation: AttestationConveyance? = nil
    ) -> CreateParams {
        var params = CreateParams(
            rp: .init(id: rpID, name: "Example"), user: .init(id: Base64URLBytes(userID), name: user, displayName: user.capitalized),
            challenge: Base64URLBytes(challenge))
        params.authenticatorSelection = .init(residentKey: residentKey, userVerification: userVerification)
        params.authenticator = authenticator
        params.attestation = attestation
        return params
    }

    public static func getParams(
        rpID: String = "example.org", challenge: [UInt8] = randomHash(), allow: [String] = [],
        userVerification: UserVerificationRequirement? = nil,
        authenticator: String? = nil, transaction: JSONObject? = nil
    ) -> GetParams {
        var params = GetParams(challenge: Base64URLBytes(challenge), rpId: rpID)
        params.allowCredentials = allow.map { CredentialDescriptor(id: Base64URLBytes(Base64URL.decode($0)!)) }
        params.userVerification = userVerification
        params.authenticator = authenticator
        params.transaction = transaction.map(Transaction.init(details:))
        return params
    }
}
