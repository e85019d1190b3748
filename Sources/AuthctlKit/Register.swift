import AuthClient
import AuthProtocol
import SystemKit

/// `authctl register`: a new credential through `credentials.create`.
struct RegisterCommand: Sendable {
    static let options: Set<String> = [
        "rp", "rp-name", "user", "display-name", "user-id", "challenge", "origin", "resident", "uv", "attestation",
        "authenticator", "name", "pin-fd", "yes", "no", "format", "timeout", "algorithm",
    ]

    let params: CreateParams
    let answers: CommandLineAnswers
    let output: OutputFormat

    /// Everything is checked here, before connecting: a usage error needs no daemon.
    init(_ arguments: Arguments) throws {
        try arguments.check("register", takes: Self.options)
        guard arguments.operands.isEmpty else { throw UsageError("register takes no operands") }
        output = try OutputFormat(arguments)
        answers = try CommandLineAnswers(arguments)
        let rpID = try arguments.required("rp")
        let userName = try arguments.required("user")
        let userVerification = try arguments.choice("uv", of: UserVerificationRequirement.allCases, default: .preferred)
        let attestation = try arguments.choice("attestation", of: [AttestationConveyance.none, .direct], default: AttestationConveyance.none)
        let resident = arguments.flags.contains("resident")

        var params = CreateParams(
            rp: .init(id: rpID, name: arguments.options["rp-name"] ?? rpID),
            user: .init(
                id: Base64URLBytes(try arguments.bytes("user-id") ?? randomBytes(16)), name: userName,
                displayName: arguments.options["display-name"] ?? userName),
            challenge: Base64URLBytes(try arguments.challenge()),
            pubKeyCredParams: try Self.algorithms(arguments.options["algorithm"]))
        params.authenticatorSelection = .init(
            residentKey: resident ? .required : .discouraged, requireResidentKey: resident,
            userVerification: userVerification)
        // fido2-cred -V checks an attestation signature: there must be one.
        params.attestation = output == .fido2Tools ? .direct : attestation
        params.origin = arguments.options["origin"]
        params.authenticator = answers.authenticator
        params.timeout = try arguments.timeout()?.wholeMilliseconds
        self.params = params
    }

    /// COSE numbers of the algorithms `--algorithm` names.
    static let algorithmNumbers: [(name: String, cose: Int)] = [("es256", -7), ("eddsa", -8), ("rs256", -257)]

    /// `--algorithm eddsa,es256`: pubKeyCredParams in that order; ES256
    /// alone when not given.
    static func algorithms(_ text: String?) throws(UsageError) -> [CreateParams.CredentialParameters] {
        guard let text else { return [.init(alg: -7)] }
        var chosen: [CreateParams.CredentialParameters] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let match = algorithmNumbers.first(where: { $0.name == name.lowercased() }) else {
                throw UsageError("--algorithm takes es256, eddsa or rs256, or several joined by commas, most preferred first")
            }
            guard !chosen.contains(where: { $0.alg == match.cose }) else { throw UsageError("--algorithm names \(name) twice") }
            chosen.append(.init(alg: match.cose))
        }
        return chosen
    }

    /// `eddsa (-8)`: the name `--algorithm` and fido2-tools use, and the COSE number.
    static func algorithmName(_ cose: Int) -> String {
        algorithmNumbers.first { $0.cose == cose }.map { "\($0.name) (\(cose))" } ?? String(cose)
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        client.setUI(CommandLineUI(answers: answers, console: console))
        // The raw result, so that --json prints all the daemon sent,
        // members this build does not know included.
        let json = try await client.call(Method.createCredential, params, as: JSONValue.self)
        if output == .json { return console.print(json.jsonText) }
        let result = try CredentialResult(json)
        let credential = try CredentialJSON(result.credential)
        switch output {
        case .fido2Tools: console.print(try Fido2ToolsFormat.credential(credential, clientDataHash: try Fido2ToolsFormat.clientDataHash(of: result), rpID: params.rp.id ?? ""))
        default: console.print(summary(credential, registration: result.registration))
        }
    }

    private func summary(_ credential: CredentialJSON, registration: Registration?) -> String {
        let rp = params.rp, user = params.user, rpID = rp.id ?? ""
        let resident = registration?.residentKey ?? (params.authenticatorSelection?.residentKey == .required)
        return "Registered a credential.\n" + aligned([
            ("Credential ID", credential.id),
            ("Relying party", rp.name == rpID ? rpID : "\(rpID) (\(rp.name))"),
            ("User", user.displayName == user.name ? user.name : "\(user.name) (\(user.displayName))"),
            ("Security key", registration.map { "\($0.authenticatorProduct) (\($0.transport.rawValue))" } ?? "-"),
            ("Name", registration?.friendlyName ?? "(unnamed)"),
            ("Discoverable", resident ? "yes (resident on the key)" : "no"),
            ("Algorithm", registration?.publicKeyAlgorithm.map(Self.algorithmName) ?? "-"),
        ])
    }
}
