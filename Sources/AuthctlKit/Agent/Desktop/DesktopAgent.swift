import AuthClient
import AuthProtocol
import SystemKit

/// `authctl agent --desktop`: the session agent of a graphical session,
/// built from what Debian ships and users already trust. The PIN and the
/// transaction's Proceed/Cancel are `pinentry` dialogs, spoken to over
/// Assuan as gpg-agent does (so a PIN goes from the dialog to the daemon
/// without passing a command line, a file or a log); the key list, the
/// account chooser and the key's name are `zenity` dialogs; the touch cue
/// is a desktop notification. Each dialog says which program asks.
///
/// Dialogs come one at a time across requests, as a person answers them;
/// a request cancelled while its dialog is up closes it. What happens is
/// written to standard error, a line each, for the journal.
final class DesktopAgent: AgentFrontEnd {
    private let pinentry: String
    private let zenity: Zenity
    private let notifications: DesktopNotifications
    /// One dialog on screen at a time.
    private let conversation = Lock()

    /// Where each line of what happens goes (standard error).
    private let log: any ConsoleOutput

    init(pinentry: String, log: any ConsoleOutput, zenity: String = "zenity", notifications: DesktopNotifications = DesktopNotifications()) {
        self.pinentry = pinentry
        self.log = log
        self.zenity = Zenity(program: zenity)
        self.notifications = notifications
        // A pinentry closed under a question (its request was cancelled)
        // must not take the agent with it when the agent says goodbye.
        ignoreBrokenPipes()
    }

    // MARK: - Notices

    func registered(uid: Int) {
        note("answering the security-key prompts of uid \(uid)'s programs that cannot ask themselves, with desktop dialogs")
    }

    func replaced(by pid: Int) {
        note("another agent (pid \(pid)) took over; this one ends")
    }

    func notice(_ text: String) {
        note(text)
    }

    func cancelled(_ notice: OperationCancelled) {
        notifications.close(for: Self.key(notice.request))
        note("\(Self.key(notice.request)): cancelled: \(printable(notice.message))")
    }

    func finished(_ notice: OperationFinished) {
        notifications.close(for: Self.key(notice.request))
        note("\(Self.key(notice.request)): \(notice.succeeded ? "done" : "failed: \(printable(notice.message ?? "an error"))")")
    }

    func statusChanged(_ status: OperationStatus) {
        let request = Self.key(status.request)
        switch status.status {
        case .waitingForTouch, .waitingForUv, .selectingByTouch, .busy:
            let cue = StatusCues.cue(for: status) ?? "Touch your security key"
            let body = status.operation.map(RequestWording.sentence) ?? ""
            notifications.show(for: request, summary: cue, body: body)
            note("\(request): \(cue) (notified)")
        case .queued, .processing, .sampleCaptured:
            notifications.close(for: request)
        }
    }

    // MARK: - Prompts

    func selectAuthenticator(_ authenticators: [Authenticator], operation: OperationInfo) async -> AuthenticatorChoice? {
        // Touching the key meant is the daemon's own answer: first, so
        // that OK alone gives it.
        let rows = [Zenity.Row(value: "touch", cells: ["Touch the key you mean", "", ""])] + authenticators.map { key in
            Zenity.Row(value: key.id, cells: [key.displayName, "\(key.product) (\(key.transport.rawValue))", key.id])
        }
        let answer = await ask(for: operation, "choose a security key") { [zenity] dialog in
            zenity.choose(
                title: "authkeyd: choose a security key", text: "\(RequestWording.sentence(operation)).\n\nWhich security key?",
                columns: ["Key", "Product", "Id"], rows: rows, in: dialog)
        }
        switch answer {
        case nil: return nil
        case "touch": return .touch
        case let id?: return authenticators.contains { $0.id == id } ? .authenticator(id: id) : nil
        }
    }

    func enterPIN(for authenticator: Authenticator, operation: OperationInfo, reason: EnterPinPrompt.Reason, retries: Int?) async -> String? {
        let (description, error, repeatPrompt) = Self.pinDialogTexts(for: authenticator, reason: reason, retries: retries)
        return await ask(for: operation, "PIN") { [pinentry] dialog -> String? in
            guard let session = try? Pinentry(program: pinentry) else { return nil }
            dialog.showing { session.abandon() }
            defer { session.close() }
            do {
                try session.set("SETTITLE", "authkeyd")
                try session.set("SETDESC", "\(RequestWording.sentence(operation)) with your security key.\n\n\(description)")
                try session.set("SETPROMPT", "PIN:")
                if let error { try session.set("SETERROR", error) }
                if let repeatPrompt {
                    try session.set("SETREPEAT", repeatPrompt)
                    try session.set("SETREPEATERROR", "The two PINs differ")
                }
                let pin = try session.getPIN()
                return pin.isEmpty ? nil : pin
            } catch {
                return nil
            }
        }
    }

    /// The PIN dialog's description, its error line (a wrong or refused
    /// PIN), and the prompt for typing a new PIN again.
    private static func pinDialogTexts(
        for authenticator: Authenticator, reason: EnterPinPrompt.Reason, retries: Int?
    ) -> (description: String, error: String?, repeatPrompt: String?) {
        let key = printable(authenticator.displayName)
        let left = PINPromptWording.retriesNote(retries)
        switch reason {
        case .required:
            return ("Enter the PIN of your security key “\(key)”\(left).", nil, nil)
        case .invalid:
            return ("Enter the PIN of your security key “\(key)”\(left).", "Wrong PIN", nil)
        case .current:
            return ("Enter the current PIN of your security key “\(key)”\(left).", nil, nil)
        case .new:
            return ("Choose a new PIN for your security key “\(key)”.", nil, "Again:")
        case .newRejected:
            return ("Choose a new PIN for your security key “\(key)”.", "The key refused that PIN: choose another", "Again:")
        }
    }

    func confirmTransaction(_ transaction: Transaction, operation: OperationInfo) async -> Bool {
        var details = ""
        for (label, value) in transaction.details {
            details += "\n\(printable(label)): \(printable(value.stringValue ?? ""))"
        }
        let text = "\(RequestWording.sentence(operation)) and asks you to sign:\n\(details)"
        return await ask(for: operation, "sign the transaction") { [pinentry] dialog -> Bool? in
            guard let session = try? Pinentry(program: pinentry) else { return nil }
            dialog.showing { session.abandon() }
            defer { session.close() }
            do {
                try session.set("SETTITLE", "authkeyd: sign this?")
                try session.set("SETDESC", text)
                try session.set("SETOK", "Sign")
                try session.set("SETCANCEL", "Cancel")
                return try session.confirm()
            } catch {
                return nil
            }
        } ?? false
    }

    func describeAuthenticator(_ authenticator: Authenticator, operation: OperationInfo, suggestion: String?) async -> String? {
        let answer = await ask(for: operation, "name the key") { [zenity] dialog in
            zenity.enterText(
                title: "authkeyd: name your security key",
                text: "\(RequestWording.sentence(operation)) with your security key “\(printable(authenticator.product))”.\n\nA name for this key:",
                suggestion: suggestion, in: dialog)
        }
        guard let name = answer?.trimmed, !name.isEmpty else { return nil }
        return name
    }

    func selectCredential(
        _ credentials: [SelectCredentialPrompt.Credential], on authenticator: Authenticator, operation: OperationInfo
    ) async -> String? {
        let rows = credentials.map { credential in
            Zenity.Row(value: credential.id, cells: [credential.user.name ?? "(no name)", credential.user.displayName ?? ""])
        }
        let answer = await ask(for: operation, "choose an account") { [zenity] dialog in
            zenity.choose(
                title: "authkeyd: choose an account",
                text: "\(RequestWording.sentence(operation)).\n\nYour security key holds several accounts there. Which one?",
                columns: ["Account", "Name"], rows: rows, in: dialog)
        }
        return answer.flatMap { id in credentials.contains { $0.id == id } ? id : nil }
    }

    /// Shows one dialog for `operation`'s request on a thread of its own,
    /// once no other dialog is up; nil when the request is cancelled before
    /// or while it shows (its dialog is then closed).
    private func ask<T: Sendable>(
        for operation: OperationInfo, _ what: String, _ show: @escaping @Sendable (Dialog) -> T?
    ) async -> T? {
        let dialog = Dialog()
        // The key is not waiting for a touch while its user is asked.
        notifications.close(for: Self.key(operation.request))
        note("\(Self.key(operation.request)): \(RequestWording.sentence(operation)): asking to \(what)")
        return await withTaskCancellationHandler {
            await runOnOwnThread { [conversation] () -> T? in
                conversation.withLock { dialog.isAbandoned ? nil : show(dialog) }
            }
        } onCancel: {
            dialog.abandon()
        }
    }

    /// The daemon's name for a request (`op-3`) as text.
    private static func key(_ request: JSONValue) -> String {
        request.stringValue ?? request.jsonText
    }

    private func note(_ line: String) {
        log.writeError("authctl agent: \(line)\n")
    }
}
