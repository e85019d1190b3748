import AuthClient
import AuthProtocol
import BrokerTestSupport
import Foundation
import TestSupport
import Testing

/// The account chooser, `ui.selectCredential`, through the broker in process
/// (moved from EndToEndTests; authctl's chooser stays there): a
/// key that holds two discoverable credentials for one relying party, and
/// a `credentials.get` without an allow list. The assertion chosen is
/// checked by py_webauthn with that credential's own public key.
@Suite(.timeLimit(.minutes(3))) struct AccountChooserTests {
    static let pin = "1234"

    /// One account registered on the key, as the relying party saw it.
    struct Account {
        var credentialID: String
        var publicKey: JSONValue
        var userID: [UInt8]
    }

    /// A daemon with one PIN-protected key holding `alice` (older) and
    /// `bob` (newer) for example.org, both recorded for the calling user.
    func keyWithTwoAccounts(pin: String? = Self.pin) async throws -> (InProcessBroker, alice: Account, bob: Account) {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=Chooser key" + (pin.map { ",pin=\($0)" } ?? "")])
        let alice = try await register("alice", on: daemon, pin: pin)
        let bob = try await register("bob", on: daemon, pin: pin)
        return (daemon, alice, bob)
    }

    func register(_ user: String, on daemon: InProcessBroker, pin: String?) async throws -> Account {
        let client = try daemon.client()
        defer { client.close() }
        client.setUI(ScriptedUI(pins: pin.map { [$0] } ?? [], name: "Chooser key"))
        let challenge = randomHash()
        let userID = Array("user-\(user)".utf8)
        let created = try await client.createCredential(
            WebAuthnFixtures.createParams(user: user, userID: userID, challenge: challenge, residentKey: .required))
        let verified = try await RelyingPartyVerifier.verifying("register", [
            "credential": created.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": "https://example.org", "rpId": "example.org",
        ]).get()
        return Account(
            credentialID: try #require(verified["credentialId"]?.stringValue), publicKey: try #require(verified["publicKey"]),
            userID: userID)
    }

    /// py_webauthn's verdict on an assertion, checked with `account`'s public key.
    func verify(_ result: CredentialResult, challenge: [UInt8], as account: Account) async throws -> Result<JSONValue, RelyingPartyVerifier.VerificationFailure> {
        try await RelyingPartyVerifier.verifying("authenticate", [
            "credential": result.credential, "challenge": .string(Base64URL.encode(challenge)),
            "origin": "https://example.org", "rpId": "example.org", "publicKey": account.publicKey,
        ])
    }

    @Test func theChooserListsBothAccountsAndTheOlderOneSigns() async throws {
        let (daemon, alice, bob) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        let ui = AccountPicker(pins: [Self.pin]) { credentials in credentials.first { $0.user.name == "alice" }?.id }
        client.setUI(ui)
        let challenge = randomHash()
        let result = try await client.getCredential(WebAuthnFixtures.getParams(challenge: challenge))

        #expect(ui.base.prompts == ["pin"], "the PIN first, then the chooser: \(ui.base.prompts)")
        let offered = try #require(ui.offered.first)
        #expect(ui.offered.count == 1)
        #expect(offered.map(\.id) == [bob.credentialID, alice.credentialID], "newest first")
        #expect(offered.map(\.user.name) == ["bob", "alice"])
        #expect(offered.map(\.user.displayName) == ["Bob", "Alice"])
        #expect(offered.map(\.user.id.bytes) == [bob.userID, alice.userID])
        #expect(offered.map { $0.registration?.id } == [bob.credentialID, alice.credentialID])
        #expect(offered.allSatisfy { $0.registration?.friendlyName == "Chooser key" })

        #expect(result.credential["id"]?.stringValue == alice.credentialID)
        #expect(result.credential["response"]?["userHandle"]?.stringValue == Base64URL.encode(alice.userID))
        #expect(result.registration?.id == alice.credentialID)
        let verified = try await verify(result, challenge: challenge, as: alice).get()
        #expect(verified["userVerified"] == true)
        // The signature is alice's: bob's key does not verify it.
        await #expect(throws: RelyingPartyVerifier.VerificationFailure.self) { try await verify(result, challenge: challenge, as: bob).get() }
    }

    @Test func choosingTheNewerAccountSignsWithIt() async throws {
        let (daemon, alice, bob) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        client.setUI(AccountPicker(pins: [Self.pin]) { $0.first { $0.user.name == "bob" }?.id })
        let challenge = randomHash()
        let result = try await client.getCredential(WebAuthnFixtures.getParams(challenge: challenge))
        #expect(result.credential["id"]?.stringValue == bob.credentialID)
        _ = try await verify(result, challenge: challenge, as: bob).get()
        await #expect(throws: RelyingPartyVerifier.VerificationFailure.self) { try await verify(result, challenge: challenge, as: alice).get() }
    }

    @Test func cancellingTheChooserCancelsTheRequest() async throws {
        let (daemon, _, _) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        let ui = AccountPicker(pins: [Self.pin]) { _ in nil }
        client.setUI(ui)
        let error = await rpcError { try await client.getCredential(WebAuthnFixtures.getParams()) }
        #expect(error?.reason == .cancelled, "\(String(describing: error))")
        #expect(error?.message.contains("ui.selectCredential") == true, "\(String(describing: error))")
        #expect(ui.offered.count == 1)
    }

    @Test func anIdThatWasNotOfferedIsRefusedClearly() async throws {
        let (daemon, alice, bob) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        let stranger = Base64URL.encode(Array("not a credential on this key".utf8))
        client.setUI(AccountPicker(pins: [Self.pin]) { _ in stranger })
        let error = await rpcError { try await client.getCredential(WebAuthnFixtures.getParams()) }
        #expect(error?.reason == .invalidParams, "\(String(describing: error))")
        let message = error?.message ?? ""
        #expect(message.contains(stranger) && message.contains("not offered"), "\(message)")
        #expect(message.contains(alice.credentialID) && message.contains(bob.credentialID), "names the ids to answer with: \(message)")

        // The daemon serves on: the next request, answered right, succeeds.
        client.setUI(AccountPicker(pins: [Self.pin]) { $0.last?.id })
        let result = try await client.getCredential(WebAuthnFixtures.getParams())
        #expect(result.credential["id"]?.stringValue == alice.credentialID)
    }

    @Test func proceedingWithoutACredentialIsRefusedClearly() async throws {
        let (daemon, _, _) = try await keyWithTwoAccounts()
        let raw = try daemon.rawClient()
        raw.request(1, Method.getCredential, try JSONValueEncoder().encode(WebAuthnFixtures.getParams()))
        let pinPrompt = try #require(raw.read { $0.method == Prompt.Kind.enterPin.method })
        raw.answer(pinPrompt, with: ["action": "proceed", "pin": .string(Self.pin)])
        let chooser = try #require(raw.read { $0.method == Prompt.Kind.selectCredential.method })
        #expect(chooser["params"]?["credentials"]?.arrayValue?.count == 2)
        raw.answer(chooser, with: ["action": "proceed"])
        let reply = try #require(raw.read { $0.isReply(to: 1) })
        #expect(reply["error"]?["data"]?["reason"] == "invalidParams", "\(reply)")
        #expect(reply["error"]?["message"]?.stringValue?.contains("has no credential") == true, "\(reply)")
    }

    @Test func aClientThatDoesNotAnswerTheChooserGetsTheNewestUnasked() async throws {
        let (daemon, _, bob) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        let ui = AccountPicker(pins: [Self.pin]) { _ in
            Issue.record("ui.selectCredential was sent to a client that does not answer it")
            return nil
        }
        client.setUI(ui)
        _ = try await client.hello(client: "chooser-test/1", answering: ["selectAuthenticator", "enterPin", "confirmTransaction"])
        let challenge = randomHash()
        let result = try await client.getCredential(WebAuthnFixtures.getParams(challenge: challenge))
        #expect(ui.offered.isEmpty)
        #expect(ui.base.prompts == ["pin"])
        #expect(result.credential["id"]?.stringValue == bob.credentialID, "the newest")
        _ = try await verify(result, challenge: challenge, as: bob).get()
    }

    @Test func aClientThatAnswersNoPINPromptFailsAtOnceWithPinRequired() async throws {
        let (daemon, _, _) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        let ui = AccountPicker(pins: [Self.pin]) { $0.first?.id }
        client.setUI(ui)
        _ = try await client.hello(client: "chooser-test/1", answering: ["selectCredential"])
        let error = await rpcError { try await client.getCredential(WebAuthnFixtures.getParams()) }
        #expect(error?.reason == .pinRequired, "\(String(describing: error))")
        #expect(error?.message.contains("does not answer ui.enterPin") == true, "\(String(describing: error))")
        #expect(ui.base.prompts.isEmpty && ui.offered.isEmpty)
        #expect(!ui.base.statusLog.contains(.waitingForTouch), "nothing to touch for a request that cannot go on")
    }

    @Test func aTransactionNobodyCanConfirmIsNotSigned() async throws {
        let (daemon, alice, _) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        let ui = AccountPicker(pins: [Self.pin]) { $0.first?.id }
        client.setUI(ui)
        _ = try await client.hello(client: "chooser-test/1", answering: ["enterPin", "selectCredential"])
        let error = await rpcError {
            try await client.getCredential(WebAuthnFixtures.getParams(allow: [alice.credentialID], transaction: ["Pay": "5 EUR"]))
        }
        #expect(error?.reason == .unsupported, "\(String(describing: error))")
        #expect(error?.message.contains("ui.confirmTransaction") == true, "\(String(describing: error))")
        #expect(ui.base.prompts.isEmpty, "nothing asked: \(ui.base.prompts)")
    }

    /// A client that answers nothing: the key is chosen by touch and keeps
    /// its name, with no prompt sent.
    @Test func aClientThatAnswersNoPromptGetsTouchToSelectAndNoNaming() async throws {
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=Never,presence=never", "--virtual-key", "name=Touched,presence=after:200ms",
        ])
        let client = try daemon.client()
        let ui = ScriptedUI(choice: .authenticator(id: "v1"), name: "Not asked")
        client.setUI(ui)
        _ = try await client.hello(client: "chooser-test/1", answering: [])
        let created = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(ui.prompts.isEmpty, "sent: \(ui.prompts)")
        #expect(ui.statusLog.contains(.selectingByTouch))
        #expect(created.registration?.authenticatorProduct == "Touched")
        #expect(created.registration?.friendlyName == nil)
        #expect(try await client.listAuthenticators().allSatisfy { $0.name != "Not asked" })
    }

    @Test(arguments: [
        (["selectCredential", "chooseAccount"], "ui[1]: \"chooseAccount\""),
        (["ui.enterPin"], "ui[0]: \"ui.enterPin\""),
    ])
    func aPromptNameHelloDoesNotKnowIsInvalidParams(_ names: [String], _ named: String) async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Chooser key"])
        let client = try daemon.client()
        let error = await rpcError { try await client.hello(client: "chooser-test/1", answering: names) }
        #expect(error?.reason == .invalidParams, "\(String(describing: error))")
        #expect(error?.message.contains(named) == true && error?.message.contains("selectCredential") == true, "\(String(describing: error))")
        // The connection serves on, and a right list is taken.
        #expect(try await client.hello(client: "chooser-test/1", answering: []).protocol == 1)
    }

    @Test func oneCredentialIsUsedWithoutAsking() async throws {
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try await InProcessBroker(["--virtual-key", "name=Chooser key,pin=\(Self.pin)"])
        let alice = try await register("alice", on: daemon, pin: Self.pin)
        let client = try daemon.client()
        let ui = AccountPicker(pins: [Self.pin]) { _ in
            Issue.record("ui.selectCredential for a single credential")
            return nil
        }
        client.setUI(ui)
        let challenge = randomHash()
        let result = try await client.getCredential(WebAuthnFixtures.getParams(challenge: challenge))
        #expect(ui.offered.isEmpty && ui.base.prompts == ["pin"])
        #expect(result.credential["id"]?.stringValue == alice.credentialID)
        _ = try await verify(result, challenge: challenge, as: alice).get()
    }

    /// Without user verification the key names nobody; the chooser shows
    /// the names the user registered the credentials with.
    @Test func withoutVerificationTheNamesComeFromTheRegistrations() async throws {
        let (daemon, alice, bob) = try await keyWithTwoAccounts(pin: nil)
        let client = try daemon.client()
        let ui = AccountPicker(pins: []) { $0.last?.id }
        client.setUI(ui)
        let challenge = randomHash()
        let result = try await client.getCredential(WebAuthnFixtures.getParams(challenge: challenge, userVerification: .discouraged))
        let offered = try #require(ui.offered.first)
        #expect(offered.map(\.user.name) == ["bob", "alice"])
        #expect(offered.map(\.user.displayName) == ["Bob", "Alice"])
        #expect(offered.map(\.user.id.bytes) == [bob.userID, alice.userID])
        #expect(result.credential["id"]?.stringValue == alice.credentialID)
        let verified = try await verify(result, challenge: challenge, as: alice).get()
        #expect(verified["userVerified"] == false)
    }

    // MARK: AuthClient's TGFFido2UiDelegate-shaped delegate

    @Test func aDelegateChoosesTheAccountFromItsOwnThread() async throws {
        let (daemon, alice, _) = try await keyWithTwoAccounts()
        let client = try daemon.client()
        let delegate = ChoosingDelegate(pin: Self.pin)
        client.setUI(DelegateAdapter(delegate))
        let challenge = randomHash()
        let result = try await client.getCredential(WebAuthnFixtures.getParams(challenge: challenge))
        #expect(delegate.shown == [["bob", "alice"]])
        #expect(result.credential["id"]?.stringValue == alice.credentialID)
        _ = try await verify(result, challenge: challenge, as: alice).get()
    }

    /// A delegate written before the chooser: the default picks the
    /// newest, and `hello(client:ui:)` declares what it answers.
    @Test func aDelegateWithoutTheChooserGetsTheNewest() async throws {
        let (daemon, _, bob) = try await keyWithTwoAccounts()
        for prompts in [nil, ["enterPin"]] as [[String]?] {
            let client = try daemon.client()
            let delegate = PINDelegate(pin: Self.pin, prompts: prompts)
            let adapter = DelegateAdapter(delegate)
            client.setUI(adapter)
            #expect(adapter.answeredPrompts.map(\.rawValue) == prompts ?? ["selectAuthenticator", "enterPin", "confirmTransaction", "describeAuthenticator", "selectCredential"])
            _ = try await client.hello(client: "chooser-test/1", ui: adapter)
            let challenge = randomHash()
            let result = try await client.getCredential(WebAuthnFixtures.getParams(challenge: challenge))
            #expect(result.credential["id"]?.stringValue == bob.credentialID)
            _ = try await verify(result, challenge: challenge, as: bob).get()
            // Declared or not, the transaction prompt is answered as declared.
            let error = await rpcError {
                try await client.getCredential(WebAuthnFixtures.getParams(allow: [bob.credentialID], transaction: ["Pay": "1 EUR"]))
            }
            #expect(error?.reason == (prompts == nil ? .cancelled : .unsupported), "\(String(describing: error))")
            client.close()
        }
    }
}

/// The error a call ended with, as the daemon gave it.
func rpcError<T>(_ call: () async throws -> T) async -> RPCError? {
    do {
        _ = try await call()
        Issue.record("the call succeeded")
        return nil
    } catch AuthClientError.daemon(let error) {
        return error
    } catch {
        Issue.record("expected the daemon's error, got \(error)")
        return nil
    }
}

/// A user who picks an account with `pick`, and answers the other prompts
/// as `base` (a ScriptedUI) does.
final class AccountPicker: AuthenticatorUI, @unchecked Sendable {
    let base: ScriptedUI
    private let pick: @Sendable ([SelectCredentialPrompt.Credential]) -> String?
    private let lock = NSLock()
    private var seen: [[SelectCredentialPrompt.Credential]] = []

    init(pins: [String?], pick: @escaping @Sendable ([SelectCredentialPrompt.Credential]) -> String?) {
        base = ScriptedUI(pins: pins)
        self.pick = pick
    }

    /// The credentials of each `ui.selectCredential`, in order.
    var offered: [[SelectCredentialPrompt.Credential]] { lock.withLock { seen } }

    func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String? {
        lock.withLock { seen.append(credentials) }
        return pick(credentials)
    }

    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        await base.selectAuthenticator(authenticators, operation: operation)
    }

    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        await base.enterPIN(for: authenticator, operation: operation, reason: reason, retries: retries)
    }

    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool {
        await base.confirmTransaction(transaction, operation: operation)
    }

    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? {
        await base.describeAuthenticator(authenticator, operation: operation, suggestion: suggestion)
    }

    func statusChanged(_ status: OperationStatus) { base.statusChanged(status) }
}

/// The two delegates below answer the PIN (and one of them the account
/// chooser); the key list, the transaction and the key's name they cancel
/// or leave unanswered, with these.
protocol CancelsTheOtherPrompts: AuthenticatorUIDelegate {}

extension CancelsTheOtherPrompts {
    func showAuthenticators(
        _ authenticators: [Authenticator], operation: OperationInfo,
        selectionHandler: @escaping @Sendable (AuthenticatorChoice) -> Void, cancelHandler: @escaping @Sendable () -> Void
    ) { cancelHandler() }

    func showTransactionDetails(
        _ transaction: Transaction, operation: OperationInfo, proceedHandler: @escaping @Sendable () -> Void,
        cancelHandler: @escaping @Sendable () -> Void
    ) { cancelHandler() }

    func retrieveAuthenticatorDescription(
        for authenticator: Authenticator, operation: OperationInfo, suggestion: String?,
        completionHandler: @escaping @Sendable (String?) -> Void
    ) { completionHandler(nil) }
}

/// A delegate from before the chooser: it answers PINs (later, from
/// another thread) and cancels the rest.
final class PINDelegate: CancelsTheOtherPrompts, @unchecked Sendable {
    let pin: String
    let prompts: [String]?

    init(pin: String, prompts: [String]?) {
        self.pin = pin
        self.prompts = prompts
    }

    var answeredPrompts: [Prompt.Kind] { prompts?.compactMap(Prompt.Kind.init(rawValue:)) ?? Prompt.Kind.allCases }

    func enterPIN(
        for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?,
        pinHandler: @escaping @Sendable (String) -> Void, cancelHandler: @escaping @Sendable () -> Void
    ) {
        let pin = pin
        runLater(after: .milliseconds(10)) { pinHandler(pin) }
    }
}

/// A delegate with the chooser: it picks the oldest account, later, from
/// another thread, and answers twice (only the first answer counts).
final class ChoosingDelegate: CancelsTheOtherPrompts, @unchecked Sendable {
    let pin: String
    private let lock = NSLock()
    private var names: [[String]] = []

    init(pin: String) { self.pin = pin }

    /// The user names of each list shown.
    var shown: [[String]] { lock.withLock { names } }

    func showCredentials(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo,
        selectionHandler: @escaping @Sendable (String) -> Void, cancelHandler: @escaping @Sendable () -> Void
    ) {
        lock.withLock { names.append(credentials.map { $0.user.name ?? "-" }) }
        let oldest = credentials.last?.id ?? ""
        runLater(after: .milliseconds(20)) {
            selectionHandler(oldest)
            cancelHandler()
        }
    }

    func enterPIN(
        for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?,
        pinHandler: @escaping @Sendable (String) -> Void, cancelHandler: @escaping @Sendable () -> Void
    ) { pinHandler(pin) }
}
