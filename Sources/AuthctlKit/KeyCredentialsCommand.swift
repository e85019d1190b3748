import AuthClient
import AuthProtocol

/// `authctl credentials list | delete | update`: the discoverable
/// credentials stored on a key (CTAP credential management). CREDENTIAL
/// may be the start of a credential id, as the list shows it.
struct KeyCredentialsCommand: Sendable {
    enum Action: String, Sendable {
        case list, delete, update
    }

    static let usage = """
        credentials takes: list ID [--rp RPID], delete ID CREDENTIAL, \
        or update ID CREDENTIAL [--user NAME] [--display-name TEXT]
        """

    let action: Action
    let key: ManagedKey
    let credential: String?
    let rpID: String?
    let userName: String?
    let displayName: String?

    init(_ arguments: Arguments) throws(UsageError) {
        let operands: [String]
        (action, key, operands) = try ManagedKey.parse("credentials", arguments, usage: Self.usage) { (action: Action) in
            switch action {
            case .list: (0, ["rp"])
            case .delete: (1, [])
            case .update: (1, ["user", "display-name"])
            }
        }
        credential = operands.first
        rpID = try arguments.single("rp")
        userName = arguments.options["user"]
        displayName = arguments.options["display-name"]
        if action == .update && userName == nil && displayName == nil {
            throw UsageError("credentials update takes --user NAME, --display-name TEXT, or both")
        }
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        key.answerPrompts(on: client, console)
        switch action {
        case .list:
            let params = ListCredentialsParams(authenticator: key.id, rpId: rpID)
            guard let stored = try await key.call(client, console, ManagementMethod.listCredentials, params, as: StoredCredentials.self) else { return }
            console.print(Self.describe(stored))
        case .delete:
            let found = try await resolve(credential ?? "", client)
            let params = CredentialParams(authenticator: key.id, credentialId: found.credentialId)
            guard try await key.call(client, console, ManagementMethod.deleteCredential, params, as: JSONValue.self) != nil else { return }
            console.print("Deleted \(IDPrefix.shortened(found.credentialId)) (\(Self.user(found.user)) at \(printable(found.rp))) from the key.")
        case .update:
            let found = try await resolve(credential ?? "", client)
            // The user id stays: it is what the relying party knows the user by.
            let user = StoredCredentials.User(
                id: found.user.id, name: userName ?? found.user.name, displayName: displayName ?? found.user.displayName)
            let params = UpdateUserParams(authenticator: key.id, credentialId: found.credentialId, user: user)
            guard try await key.call(client, console, ManagementMethod.updateCredentialUser, params, as: JSONValue.self) != nil else { return }
            console.print("Updated \(IDPrefix.shortened(found.credentialId)): the user is now \(Self.user(user)).")
        }
    }

    /// A credential on the key and the relying party it belongs to.
    private struct Found {
        var rp: String
        var credentialId: String
        var user: StoredCredentials.User
    }

    /// The one credential on the key whose id `given` is, or starts (see
    /// `IDPrefix`); none or several end the run, with what to give instead.
    private func resolve(_ given: String, _ client: AuthClient) async throws -> Found {
        let stored = try await client.storedCredentials(on: key.id)
        let all = stored.relyingParties.flatMap { party in
            party.credentials.map { Found(rp: party.id, credentialId: $0.credentialId, user: $0.user) }
        }
        let matches = IDPrefix.matches(given, in: all.map(\.credentialId))
        guard matches.count == 1, let found = all.first(where: { $0.credentialId == matches[0] }) else {
            throw Stop(
                matches.isEmpty
                    ? "no credential on \(key.id) has an id that starts \(given) (give at least \(IDPrefix.shortest) characters; see authctl credentials list \(key.id))"
                    : "\(given) starts \(matches.count) credentials' ids: give more of it",
                .failure)
        }
        return found
    }

    static func describe(_ stored: StoredCredentials) -> String {
        let rows = stored.relyingParties.flatMap { party in
            party.credentials.map { credential in
                [printable(party.id), printable(credential.user.name ?? "-"), printable(credential.user.displayName ?? "-"),
                 IDPrefix.shortened(credential.credentialId), protection(credential.credProtect),
                 printable(credential.registration?.friendlyName ?? "-")]
            }
        }
        let count = "\(stored.existing) stored, \(stored.remaining) slot\(stored.remaining == 1 ? "" : "s") free"
        guard !rows.isEmpty else { return "No credentials stored on the key.\n" + count }
        return table(["RP", "USER", "DISPLAY NAME", "CREDENTIAL", "PROTECTION", "NAME"], rows) + "\n" + count
    }

    /// credProtect (CTAP 2.1 §12.1) in words: when the key asks for
    /// verification before it uses the credential.
    static func protection(_ level: Int?) -> String {
        switch level {
        case 1?: return "uv optional"
        case 2?: return "uv or id list"
        case 3?: return "uv required"
        default: return "-"
        }
    }

    static func user(_ user: StoredCredentials.User) -> String {
        let name = printable(user.name ?? "-")
        guard let display = user.displayName, display != user.name else { return name }
        return "\(name) (\(printable(display)))"
    }
}
