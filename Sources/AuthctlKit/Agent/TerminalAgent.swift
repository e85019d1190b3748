import AuthClient
import AuthProtocol
import SystemKit

/// `authctl agent`'s face, like pkttyagent's: each request is announced
/// with the program that made it, then its prompts are asked at the
/// terminal the agent runs on, one at a time across requests; statuses and
/// the end of each request are told as they come, without waiting for the
/// question on screen.
final class TerminalAgent: AgentFrontEnd {
    private struct State {
        /// The requests announced, with who made each.
        var announced: [JSONValue: Requester?] = [:]
        /// The request whose question is on screen.
        var asking: JSONValue?
        /// Requests cancelled: their questions are not asked.
        var cancelled: Set<JSONValue> = []
        /// Each request's last status told, so that each is told once.
        var lastStatus: [JSONValue: OperationStatus.Status] = [:]
    }

    private let terminal: Terminal
    private let state = Protected(State())
    /// One prompt at a time: a PIN asked twice (the new one confirmed) is
    /// not split by another request's question.
    private let conversation = Lock()

    init(terminal: Terminal) { self.terminal = terminal }

    // MARK: - Notices

    func registered(uid: Int) {
        terminal.announce("authctl agent: answering the security-key prompts of uid \(uid)'s programs that cannot ask themselves. Ctrl-C ends.\n")
    }

    func replaced(by pid: Int) {
        terminal.announce("authctl agent: another agent (pid \(pid)) took over; this one ends.\n")
    }

    func notice(_ text: String) {
        terminal.announce("authctl agent: \(text).\n")
    }

    func cancelled(_ notice: OperationCancelled) {
        let requester = state.withLock { state -> Requester?? in
            state.cancelled.insert(notice.request)
            state.lastStatus[notice.request] = nil
            defer { state.announced[notice.request] = nil }
            return state.announced[notice.request]
        }
        terminal.announce("── \(RequestWording.who(requester ?? nil)): cancelled: \(printable(notice.message))\n")
        if state.withLock({ $0.asking == notice.request }) { terminal.abandonQuestion() }
    }

    func finished(_ notice: OperationFinished) {
        let requester = state.withLock { state -> Requester?? in
            state.lastStatus[notice.request] = nil
            defer { state.announced[notice.request] = nil }
            return state.announced[notice.request]
        }
        let outcome = notice.succeeded ? "done" : "failed: \(printable(notice.message ?? notice.reason?.rawValue ?? "an error"))"
        terminal.announce("── \(RequestWording.who(requester ?? nil)): \(outcome)\n")
    }

    func statusChanged(_ status: OperationStatus) {
        guard let operation = status.operation else { return }
        announceIfNew(operation)
        let changed = state.withLock { state -> Bool in
            defer { state.lastStatus[status.request] = status.status }
            return state.lastStatus[status.request] != status.status
        }
        guard changed, let cue = StatusCues.cue(for: status) else { return }
        terminal.announce("   \(cue)\n")
    }

    // MARK: - Prompts

    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        await ask(for: operation) { $0.chooseAuthenticator(authenticators, operation: operation) }
    }

    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        await ask(for: operation) {
            $0.enterPIN(
                for: authenticator, operation: operation, reason: reason, retries: retries, rules: NewPINRules(keyMinimum: nil),
                refusal: nil)
        }
    }

    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool {
        await ask(for: operation) { $0.confirm(transaction, operation: operation) } ?? false
    }

    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? {
        await ask(for: operation) { $0.nameAuthenticator(suggestion: suggestion) } ?? nil
    }

    func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String? {
        await ask(for: operation) { $0.chooseAccount(credentials, operation: operation) }
    }

    /// Asks `question` at the terminal for `operation`'s request, on a
    /// thread of its own, once no other request's question is on screen;
    /// nil when the request is cancelled before or while it is asked.
    private func ask<T: Sendable>(for operation: OperationInfo, _ question: @escaping @Sendable (Terminal) -> T?) async -> T? {
        let request = operation.request
        return await withTaskCancellationHandler {
            await runOnOwnThread { [self] () -> T? in
                conversation.withLock { () -> T? in
                    let cancelled = state.withLock { state -> Bool in
                        if !state.cancelled.contains(request) { state.asking = request }
                        return state.cancelled.contains(request)
                    }
                    guard !cancelled else { return nil }
                    defer { state.withLock { $0.asking = nil } }
                    announceIfNew(operation)
                    return question(terminal)
                }
            }
        } onCancel: { [self] in
            let onScreen = state.withLock { state -> Bool in
                state.cancelled.insert(request)
                return state.asking == request
            }
            if onScreen { terminal.abandonQuestion() }
        }
    }

    // MARK: - Wording

    /// Says who wants the key for what, the first time a request shows.
    private func announceIfNew(_ operation: OperationInfo) {
        let isNew = state.withLock { state -> Bool in
            guard state.announced[operation.request] == nil, !state.cancelled.contains(operation.request) else { return false }
            state.announced[operation.request] = .some(operation.requester)
            return true
        }
        guard isNew else { return }
        terminal.announce("── \(RequestWording.who(operation.requester)) wants to \(RequestWording.purpose(of: operation)) with your security key\n")
    }
}
