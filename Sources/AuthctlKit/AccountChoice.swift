import AuthClient
import AuthProtocol
import SystemKit

/// `authctl assert`'s answer to the account chooser (`ui.selectCredential`):
/// the credential of `--user NAME`, else the one picked from a numbered
/// list at the terminal. Where neither can answer, the prompt is
/// cancelled and the reason kept, so that the command ends with it (and
/// the exit code of its kind) rather than with the daemon's bare
/// "cancelled".
final class AccountChoice: Sendable {
    private let refusal = Protected<RPCError?>(nil)

    /// Why the last prompt went unanswered, if it did: `noCredentials`
    /// for a `--user` that matches no account (exit 1), `cancelled` when
    /// nothing could answer (exit 2).
    var lastRefusal: RPCError? { refusal.withLock { $0 } }

    func choose(
        _ credentials: [SelectCredentialPrompt.Credential], user userName: String?, operation: OperationInfo, terminal: Terminal?
    ) async -> String? {
        let site = operation.rpId ?? "the site"
        if let userName {
            let matching = credentials.filter { $0.user.name == userName }
            if matching.count == 1 { return matching[0].id }
            return refuse(
                matching.isEmpty
                    ? "the key holds no credential of user \"\(userName)\" for \(site); its accounts: \(Self.accounts(credentials))"
                    : "the key holds \(matching.count) credentials of user \"\(userName)\" for \(site); choose one with --credential ID (\(matching.map(\.id).joined(separator: ", ")))",
                .noCredentials)
        }
        guard let terminal else {
            return refuse(
                "the key holds \(credentials.count) credentials for \(site) (\(Self.accounts(credentials))); choose one with --user NAME",
                .cancelled)
        }
        return await runOnOwnThread { terminal.chooseAccount(credentials, operation: operation) }
    }

    private func refuse(_ message: String, _ reason: ErrorReason) -> String? {
        refusal.withLock { $0 = RPCError(reason, message) }
        return nil
    }

    /// The accounts by name, for a message: "alice, bob".
    private static func accounts(_ credentials: [SelectCredentialPrompt.Credential]) -> String {
        credentials.map { printable($0.user.name ?? "unnamed \($0.id)") }.joined(separator: ", ")
    }
}

extension Terminal {
    /// The numbered list of accounts, newest first; nil cancels.
    func chooseAccount(_ credentials: [SelectCredentialPrompt.Credential], operation: OperationInfo) -> String? {
        var menu = "Which account\(operation.rpId.map { " for \(printable($0))" } ?? "")?\n"
        for (number, credential) in credentials.enumerated() {
            let user = credential.user
            let name = user.name.map(printable) ?? "(no name given)"
            let display = user.displayName.flatMap { $0 == user.name || $0.isEmpty ? nil : "  \(printable($0))" } ?? ""
            menu += "  \(number + 1)) \(name)\(display)  [\(credential.id.prefix(12))…]\n"
        }
        say(menu)
        while let answer = ask("Choice [1-\(credentials.count); empty or q cancels]: ")?.trimmed {
            if answer.isEmpty || answer.lowercased() == "q" { return nil }
            if let number = Int(answer), credentials.indices.contains(number - 1) { return credentials[number - 1].id }
            say("Type a number from 1 to \(credentials.count), or q.\n")
        }
        return nil
    }
}
