import AuthClient
import AuthProtocol
import SystemKit

/// `authctl assert`: an authentication through `credentials.get`.
struct AssertCommand: Sendable {
    static let options: Set<String> = [
        "rp", "credential", "challenge", "origin", "uv", "authenticator", "transaction", "pin-fd", "yes", "no", "format",
        "timeout", "user",
    ]

    let params: GetParams
    let answers: CommandLineAnswers
    let output: OutputFormat

    /// Everything is checked here, before connecting: a usage error needs no daemon.
    init(_ arguments: Arguments) throws {
        try arguments.check("assert", takes: Self.options)
        guard arguments.operands.isEmpty else { throw UsageError("assert takes no operands") }
        output = try OutputFormat(arguments)
        var answers = try CommandLineAnswers(arguments)
        answers.userName = arguments.options["user"]
        self.answers = answers
        var params = GetParams(
            challenge: Base64URLBytes(try arguments.challenge()), rpId: try arguments.required("rp"))
        var allowed: [CredentialDescriptor] = []
        for text in arguments.repeated["credential"] ?? [] {
            guard let id = Base64URL.decode(text), !id.isEmpty else { throw UsageError("--credential takes a base64url credential id") }
            allowed.append(CredentialDescriptor(id: Base64URLBytes(id)))
        }
        // No --credential: any discoverable credential of the RP will do.
        params.allowCredentials = allowed.isEmpty ? nil : allowed
        params.userVerification = try arguments.choice("uv", of: UserVerificationRequirement.allCases, default: .preferred)
        params.transaction = try Self.transaction(arguments.repeated["transaction"] ?? [])
        params.origin = arguments.options["origin"]
        params.authenticator = answers.authenticator
        params.timeout = try arguments.timeout()?.wholeMilliseconds
        self.params = params
    }

    /// `--transaction Label=Value`, repeated, as `{details: {…}}` in the order given.
    static func transaction(_ pairs: [String]) throws(UsageError) -> Transaction? {
        guard !pairs.isEmpty else { return nil }
        var details = JSONObject()
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw UsageError("--transaction takes Label=Value, such as Amount=10")
            }
            let label = String(pair[..<equals])
            guard details[label] == nil else { throw UsageError("--transaction \(label) given twice") }
            details[label] = .string(String(pair[pair.index(after: equals)...]))
        }
        return Transaction(details: details)
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        let ui = CommandLineUI(answers: answers, console: console)
        client.setUI(ui)
        // The raw result, so that --json prints all the daemon sent.
        let json: JSONValue
        do {
            json = try await client.call(Method.getCredential, params, as: JSONValue.self)
        } catch {
            // The account chooser went unanswered: say why, not just "cancelled".
            throw ui.accounts.lastRefusal.map(AuthClientError.daemon) ?? error
        }
        if output == .json { return console.print(json.jsonText) }
        let result = try CredentialResult(json)
        let credential = try CredentialJSON(result.credential)
        switch output {
        case .fido2Tools: console.print(try Fido2ToolsFormat.assertion(credential, clientDataHash: try Fido2ToolsFormat.clientDataHash(of: result), rpID: params.rpId ?? ""))
        default: console.print(try summary(credential, registration: result.registration))
        }
    }

    private func summary(_ credential: CredentialJSON, registration: Registration?) throws(AuthClientError) -> String {
        guard let data = AuthenticatorData(try credential.assertion().authenticatorData) else {
            throw .protocolViolation("the authenticator data is shorter than 37 bytes")
        }
        var rows: [(label: String, value: String)] = [("Credential ID", credential.id)]
        if let user = credential.response.userHandle, !user.bytes.isEmpty { rows.append(("User handle", user.description)) }
        if let registration { rows.append(("Security key", registration.friendlyName ?? registration.authenticatorProduct)) }
        rows += [("Sign count", String(data.signCount)), ("Flags", data.flagNames)]
        return "Authenticated.\n" + aligned(rows)
    }
}
