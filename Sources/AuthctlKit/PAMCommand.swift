import AuthClient
import Glibc
import AuthProtocol
import PAMAuthFile
import SystemKit

/// `authctl pam register | list`: the lines of pam_u2f's authfile that
/// pam_authkeyd(8) reads. `register` makes a credential as pamu2fcfg does
/// and writes the same line; `list` shows which of the line's keys are
/// plugged in.
enum PAMCommand: Sendable {
    case register(Registration)
    case list(origin: String, authFile: String?)

    struct Registration: Sendable {
        var origin: String
        var appID: String
        var resident: Bool
        var options: EnrolledCredential.Options
        var answers: CommandLineAnswers
        var algorithms: [CreateParams.CredentialParameters]
        var authFile: String?
        var printOnly: Bool
        var timeout: Int?
    }

    static let registerOptions: Set<String> = [
        "origin", "appid", "resident", "no-presence", "verification", "pin-verification", "authenticator", "algorithm", "authfile",
        "print", "timeout", "pin-fd", "name",
    ]

    init(_ arguments: Arguments) throws(UsageError) {
        let origin = try arguments.single("origin") ?? "pam://\(hostName())"
        switch (arguments.operands.first, arguments.operands.count) {
        case ("register"?, 1):
            try arguments.check("pam register", takes: Self.registerOptions)
            self = .register(Registration(
                origin: origin, appID: try arguments.single("appid") ?? origin, resident: arguments.flags.contains("resident"),
                options: .init(
                    presence: !arguments.flags.contains("no-presence"), verification: arguments.flags.contains("verification"),
                    pin: arguments.flags.contains("pin-verification")),
                answers: try CommandLineAnswers(arguments),
                algorithms: try RegisterCommand.algorithms(arguments.options["algorithm"]),
                authFile: try arguments.single("authfile"), printOnly: arguments.flags.contains("print"),
                timeout: try arguments.timeout()?.wholeMilliseconds))
        case ("list"?, 1):
            try arguments.check("pam list", takes: ["origin", "authfile"])
            self = .list(origin: origin, authFile: try arguments.single("authfile"))
        default:
            throw UsageError("pam takes register [OPTIONS] or list [--origin ORIGIN] [--authfile PATH]")
        }
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        guard let account = UserDatabase.account(uid: getuid()) else { throw Stop("your uid \(getuid()) has no account", .failure) }
        switch self {
        case .register(let registration): try await register(registration, for: account, client, console)
        case .list(let origin, let authFile): try await list(origin: origin, authFile: authFile, for: account, client, console)
        }
    }

    /// pam_u2f's default authfile, which pam_authkeyd reads too.
    static func defaultAuthFile(of account: UserDatabase.Account) -> String {
        "\(account.home)/.config/Yubico/u2f_keys"
    }

    private func register(
        _ registration: Registration, for account: UserDatabase.Account, _ client: AuthClient, _ console: Console
    ) async throws {
        client.setUI(CommandLineUI(answers: registration.answers, console: console))
        // As pamu2fcfg: the origin is the relying party id and the appid
        // its name; the user is 32 random bytes named after the account;
        // the clientDataHash is random; no verification is asked of the key
        // (+verification and +pin are demanded at each use, not here).
        var params = CreateParams(
            rp: .init(id: registration.origin, name: registration.appID),
            user: .init(id: Base64URLBytes(try randomBytes(32)), name: account.name, displayName: account.name),
            challenge: nil, pubKeyCredParams: registration.algorithms)
        params.clientDataHash = Base64URLBytes(try randomBytes(32))
        params.authenticatorSelection = .init(
            residentKey: registration.resident ? .required : .discouraged, requireResidentKey: registration.resident,
            userVerification: .discouraged)
        params.attestation = AttestationConveyance.none
        params.authenticator = registration.answers.authenticator
        params.timeout = registration.timeout
        let result = try await client.createCredential(params)
        let credential = try CredentialJSON(result.credential)
        guard let data = AuthenticatorData(try credential.attestationObject().authenticatorData),
            let attested = data.attestedCredential, let key = EnrolledCredential.publicKey(fromCOSE: attested.publicKey)
        else { throw AuthClientError.protocolViolation("the registration carries no public key pam_u2f's format can hold") }
        let enrolled = EnrolledCredential(
            keyHandle: registration.resident ? .resident : .id(attested.credentialID), publicKey: key.bytes, algorithm: key.algorithm,
            options: registration.options)
        if registration.printOnly {
            // pamu2fcfg's output, byte for byte: no line feed after it.
            return console.print(AuthFile.line(for: account.name, [enrolled]), terminator: "")
        }
        let path = registration.authFile ?? Self.defaultAuthFile(of: account)
        do {
            try FileSystem.makeDirectory(FileSystem.directory(containing: path), mode: 0o700, intermediates: true)
            let existing = try AtomicFile.read(path) ?? []
            try AtomicFile.write(AuthFile.adding(enrolled, for: account.name, to: existing), to: path, permissions: 0o600)
        } catch {
            throw Stop("writing \(path): \(error)", .failure)
        }
        console.print("Added a credential (\(key.algorithm.rawValue)) for \(account.name) at \(registration.origin) to \(path).")
    }

    private func list(
        origin: String, authFile: String?, for account: UserDatabase.Account, _ client: AuthClient, _ console: Console
    ) async throws {
        let path = authFile ?? Self.defaultAuthFile(of: account)
        let read: [EnrolledCredential]??
        do {
            read = try AtomicFile.read(path).map { contents throws in try AuthFile.credentials(of: account.name, in: contents) }
        } catch {
            throw Stop("reading \(path): \(error)", .failure)
        }
        guard let found = read else { throw Stop("no authfile \(path): authctl pam register makes one", .failure) }
        guard let credentials = found else { throw Stop("\(path) has no line for \(account.name)", .failure) }
        let keys = try await client.listAuthenticators()
        var rows: [[String]] = []
        for (index, credential) in credentials.enumerated() {
            let handle: String
            let present: String
            switch credential.keyHandle {
            case .resident:
                handle = "*"
                present = "resident: not probed (finding it needs your PIN)"
            case .id(let id):
                handle = String(Base64.encode(id).prefix(12)) + "…"
                present = try await keysHolding(id, origin: origin, among: keys, client).joined(separator: ", ")
            }
            rows.append(["\(index + 1)", credential.algorithm.rawValue, credential.options.field.isEmpty ? "-" : credential.options.field, handle, present.isEmpty ? "no" : present])
        }
        console.print("\(account.name) in \(path), relying party \(origin):")
        console.print(table(["#", "TYPE", "OPTIONS", "KEY HANDLE", "PLUGGED IN"], rows))
    }

    /// The keys that hold credential `id`, asked silently: an assertion
    /// without a touch (CTAP `up=false`), which a key answers only for a
    /// credential it holds. A key that cannot be asked so (U2F-only) is
    /// named with a question mark.
    private func keysHolding(_ id: [UInt8], origin: String, among keys: [Authenticator], _ client: AuthClient) async throws(Stop) -> [String] {
        var holding: [String] = []
        for key in keys {
            var params = GetParams(challenge: nil, rpId: origin)
            params.clientDataHash = Base64URLBytes(try randomBytes(32))
            params.allowCredentials = [CredentialDescriptor(id: Base64URLBytes(id))]
            params.userPresence = false
            params.userVerification = .discouraged
            params.authenticator = key.id
            do {
                _ = try await client.getCredential(params)
                holding.append("\(key.id) (\(key.displayName))")
            } catch where error.reason == .unsupported {
                holding.append("\(key.id)?")
            } catch {
                continue
            }
        }
        return holding
    }
}
