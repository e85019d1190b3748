import AuthClient
import AuthProtocol
import Glibc

/// `authctl registrations list | rename ID NAME | delete ID`: the daemon's
/// record of this user's named registrations.
enum RegistrationsCommand: Sendable {
    case list(json: Bool)
    case rename(id: String, name: String)
    case delete(id: String)

    static let usage = "registrations takes: list, rename ID NAME, or delete ID"

    init(_ arguments: Arguments) throws(UsageError) {
        try arguments.check("registrations", takes: [])
        let operands = arguments.operands
        switch (operands.first, operands.count) {
        case ("list"?, 1): self = .list(json: arguments.json)
        case ("rename"?, 3): self = .rename(id: operands[1], name: operands[2])
        case ("delete"?, 2): self = .delete(id: operands[1])
        default: throw UsageError(Self.usage)
        }
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        switch self {
        case .list(let json):
            let registrations = try await client.listRegistrations()
            if json { return console.print(Commands.encode(RegistrationList(registrations: registrations)).jsonText) }
            guard !registrations.isEmpty else { return console.print("No registrations. authctl register makes one.") }
            console.print(table(
                ["ID", "RP", "USER", "KEY", "CREATED", "LAST USED"],
                registrations.map { registration in
                    [IDPrefix.shortened(registration.id), registration.rpId, registration.user.name,
                     registration.friendlyName ?? registration.authenticatorProduct,
                     utcDate(registration.createdAt), registration.lastUsedAt.map(utcDate) ?? "never"]
                }))
        case .rename(let given, let name):
            let id = try await Self.resolve(given, client)
            let renamed = try await client.renameRegistration(id: id, to: name)
            console.print("Renamed \(IDPrefix.shortened(renamed.id)) to \"\(renamed.friendlyName ?? name)\".")
        case .delete(let given):
            let id = try await Self.resolve(given, client)
            try await client.deleteRegistration(id: id)
            console.print("Deleted \(IDPrefix.shortened(id)).")
        }
    }

    /// The whole id of the one registration that `given` names (see
    /// `IDPrefix`). An id that matches none goes to the daemon as it is,
    /// for its own answer.
    static func resolve(_ given: String, _ client: AuthClient) async throws -> String {
        let matches = IDPrefix.matches(given, in: try await client.listRegistrations().map(\.id))
        guard matches.count <= 1 else { throw Stop("\(given) starts \(matches.count) registrations' ids: give more of it", .usage) }
        return matches.first ?? given
    }
}

/// Seconds since the epoch as a UTC date, such as 2025-03-14.
func utcDate(_ seconds: Int64) -> String {
    var time = time_t(seconds)
    var parts = tm()
    guard gmtime_r(&time, &parts) != nil else { return "?" }
    func twoDigits(_ n: Int32) -> String { n < 10 ? "0\(n)" : String(n) }
    return "\(parts.tm_year + 1900)-\(twoDigits(parts.tm_mon + 1))-\(twoDigits(parts.tm_mday))"
}
