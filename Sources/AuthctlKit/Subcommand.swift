import AuthClient

/// A subcommand with arguments of its own: it parses them first, so that a
/// usage error needs no daemon, then runs with a connected client. Either
/// throws a `UsageError`, a `Stop` or the client's `AuthClientError`.
protocol Subcommand: Sendable {
    init(_ arguments: Arguments) throws
    func run(_ client: AuthClient, _ console: Console) async throws
}

extension RegisterCommand: Subcommand {}
extension AssertCommand: Subcommand {}
extension RegistrationsCommand: Subcommand {}
extension PINCommand: Subcommand {}
extension ResetCommand: Subcommand {}
extension KeyCredentialsCommand: Subcommand {}
extension FingerprintsCommand: Subcommand {}
extension ConfigCommand: Subcommand {}
extension AgentCommand: Subcommand {}
extension PAMCommand: Subcommand {}

/// Those subcommands, by name.
let subcommands: [String: any Subcommand.Type] = [
    "register": RegisterCommand.self, "assert": AssertCommand.self, "registrations": RegistrationsCommand.self,
    "pin": PINCommand.self, "reset": ResetCommand.self, "credentials": KeyCredentialsCommand.self,
    "fingerprints": FingerprintsCommand.self, "config": ConfigCommand.self, "agent": AgentCommand.self,
    "pam": PAMCommand.self,
]
