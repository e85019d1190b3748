import AuthClient
import AuthProtocol
import BrokerTestSupport
import Testing

/// `authctl registrations list | rename | delete`: the daemon's record of
/// the user's registrations, named by the start of their ids.
@Suite(.timeLimit(.minutes(2))) struct RegistrationsTests {
    @Test func listRenameAndDelete() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let empty = await authctl(["registrations", "list"], broker: daemon)
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.output == "No registrations. authctl register makes one.\n")

        let registered = await authctl(["register", "--rp", "example.org", "--user", "alice", "--name", "Work"], broker: daemon)
        let id = try #require(registered.rows["Credential ID"], "\(registered)")
        let short = String(id.prefix(16)) + "…"

        let listed = await authctl(["registrations", "list"], broker: daemon)
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.lines.count == 2, "\(listed)")
        #expect(listed.lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["ID", "RP", "USER", "KEY", "CREATED", "LAST", "USED"])
        let row = listed.lines.last?.split(separator: " ", omittingEmptySubsequences: true).map(String.init) ?? []
        #expect(row.count == 6, "\(listed)")
        #expect(Array(row.prefix(4)) == [short, "example.org", "alice", "Work"], "\(listed)")
        #expect(row.last == "never")
        #expect(row.dropLast().last?.count == 10, "a date such as 2025-03-14: \(listed)")

        let json = await authctl(["registrations", "list", "--json"], broker: daemon)
        let decoded = try JSONValueDecoder().decode(RegistrationList.self, from: try json.json())
        #expect(decoded.registrations.map(\.id) == [id])

        // The start of the id, as the table shows it ("…" included), names it.
        let renamed = await authctl(["registrations", "rename", short, "Home"], broker: daemon)
        #expect(renamed.status == 0, "\(renamed)")
        #expect(renamed.output == "Renamed \(short) to \"Home\".\n")
        #expect(try await daemon.client().listRegistrations().map(\.friendlyName) == ["Home"])

        let deleted = await authctl(["registrations", "delete", String(id.prefix(10))], broker: daemon)
        #expect(deleted.status == 0, "\(deleted)")
        #expect(deleted.output == "Deleted \(short).\n")
        #expect(try await daemon.client().listRegistrations().isEmpty)
    }

    /// An id that names no registration goes to the daemon as it is, and
    /// its answer is the command's.
    @Test func anUnknownIdIsTheDaemonsToRefuse() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl(["registrations", "delete", "AAAAAAAAAAAA"], broker: daemon)
        #expect(shown.status != 0, "\(shown)")
        #expect(shown.errors.hasPrefix("authctl: "), "\(shown)")
        #expect(shown.output.isEmpty)
    }
}
