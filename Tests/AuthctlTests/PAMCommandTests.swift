import BrokerTestSupport
import Glibc
import PAMAuthFile
import SystemKit
import TestSupport
import Testing

/// `authctl pam register | list`: the user's line of pam_u2f's authfile,
/// written as pamu2fcfg writes it and read back as pam_authkeyd reads it.
@Suite(.timeLimit(.minutes(2))) struct PAMCommandTests {
    let directory = TemporaryDirectory(prefix: "authctl-pam")
    var authfile: String { directory.file("Yubico/u2f_keys") }
    let user = UserDatabase.account(uid: getuid())?.name ?? "?"

    func credentials(in path: String) throws -> [EnrolledCredential] {
        let contents = try #require(try AtomicFile.read(path), "\(path) was not written")
        return try #require(try AuthFile.credentials(of: user, in: contents), "no line for \(user) in \(path)")
    }

    @Test func registerAddsTheUsersLineAndListFindsTheKey() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let registered = await authctl(["pam", "register", "--origin", "pam://test", "--authfile", authfile], broker: daemon)
        #expect(registered.status == 0, "\(registered)")
        #expect(registered.output == "Added a credential (es256) for \(user) at pam://test to \(authfile).\n")
        let first = try credentials(in: authfile)
        #expect(first.count == 1)
        #expect(first.first?.algorithm == .es256)
        #expect(first.first?.options == .init(presence: true), "pamu2fcfg's default: presence asked at each use")
        var status = stat()
        #expect(stat(authfile, &status) == 0 && status.st_mode & 0o777 == 0o600)

        // A second key handle joins the same line, with its own options.
        let second = await authctl(
            ["pam", "register", "--origin", "pam://test", "--authfile", authfile, "--algorithm", "eddsa", "--no-presence",
             "--verification", "--pin-verification"], broker: daemon)
        #expect(second.status == 0, "\(second)")
        let both = try credentials(in: authfile)
        #expect(both.map(\.algorithm) == [.es256, .eddsa])
        #expect(both.last?.options == .init(presence: false, verification: true, pin: true))

        let listed = await authctl(["pam", "list", "--origin", "pam://test", "--authfile", authfile], broker: daemon)
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.lines.first == "\(user) in \(authfile), relying party pam://test:")
        #expect(listed.lines.dropFirst().first?.split(separator: " ", omittingEmptySubsequences: true)
            == ["#", "TYPE", "OPTIONS", "KEY", "HANDLE", "PLUGGED", "IN"], "\(listed)")
        let rows = listed.lines.dropFirst(2).map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.count == 2, "\(listed)")
        #expect(rows.first.map { [$0[0], $0[1], $0[2]] } == ["1", "es256", "+presence"])
        #expect(rows.last.map { [$0[0], $0[1], $0[2]] } == ["2", "eddsa", "+verification+pin"])
        #expect(rows.allSatisfy { $0.suffix(2) == ["v1", "(Blue)"] }, "both credentials are on the plugged-in key: \(listed)")

        // Another origin: the key holds no credential for it.
        let elsewhere = await authctl(["pam", "list", "--origin", "pam://other", "--authfile", authfile], broker: daemon)
        #expect(elsewhere.status == 0, "\(elsewhere)")
        #expect(elsewhere.lines.dropFirst(2).allSatisfy { $0.hasSuffix("  no") }, "\(elsewhere)")
    }

    /// `--print`: pamu2fcfg's output, byte for byte (no line feed), and no file.
    @Test func printWritesTheLineOnly() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl(["pam", "register", "--origin", "pam://test", "--authfile", authfile, "--print", "--resident"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        #expect(!shown.output.hasSuffix("\n"))
        #expect(shown.output.hasPrefix("\(user):*,"), "a resident credential's handle is *: \(shown)")
        let parsed = try #require(try AuthFile.credentials(of: user, in: Array(shown.output.utf8)))
        #expect(parsed.map(\.keyHandle) == [.resident])
        #expect(try AtomicFile.read(authfile) == nil)

        try FileSystem.makeDirectory(FileSystem.directory(containing: authfile), mode: 0o700, intermediates: true)
        try AtomicFile.write(Array((shown.output + "\n").utf8), to: authfile, permissions: 0o600)
        let listed = await authctl(["pam", "list", "--origin", "pam://test", "--authfile", authfile], broker: daemon)
        #expect(listed.status == 0, "\(listed)")
        let row = listed.lines.last?.split(separator: " ", omittingEmptySubsequences: true).map(String.init) ?? []
        #expect(row.prefix(4) == ["1", "es256", "+presence", "*"], "\(listed)")
        #expect(listed.lines.last?.hasSuffix("  resident: not probed (finding it needs your PIN)") == true, "\(listed)")
    }

    /// What keeps `pam list` from reading the file: exit 1, and why.
    @Test func listSaysWhatIsWrongWithTheFile() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let list = ["pam", "list", "--authfile", authfile]
        let missing = await authctl(list, broker: daemon)
        #expect(missing.status == 1)
        #expect(missing.errors == "authctl: no authfile \(authfile): authctl pam register makes one\n")

        try FileSystem.makeDirectory(FileSystem.directory(containing: authfile), mode: 0o700, intermediates: true)
        try AtomicFile.write(Array("someone-else:*,AAAA,es256,+presence\n".utf8), to: authfile, permissions: 0o600)
        let noLine = await authctl(list, broker: daemon)
        #expect(noLine.status == 1)
        #expect(noLine.errors == "authctl: \(authfile) has no line for \(user)\n")

        try AtomicFile.write(Array("\(user):nokey\n".utf8), to: authfile, permissions: 0o600)
        let malformed = await authctl(list, broker: daemon)
        #expect(malformed.status == 1)
        #expect(malformed.errors == "authctl: reading \(authfile): line 1, credential 1: no public key\n")
        #expect(malformed.output.isEmpty)
    }
}
