import AuthClient
import AuthProtocol
import BrokerTestSupport
import Testing

/// `authctl register` and `authctl assert` against a virtual key, with no
/// terminal: what the command line answers (`--name`, `--pin-fd`,
/// `--user`, `--yes`/`--no`) is used, and what it does not answer is
/// cancelled, never waited for.
@Suite(.timeLimit(.minutes(2))) struct RegisterAssertTests {
    static let userID = "AAECAwQFBgcICQoLDA0ODw"

    @Test func registerPrintsASummary() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl(["register", "--rp", "example.org", "--user", "alice"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.lines.first == "Registered a credential.")
        let rows = shown.rows
        #expect(rows["Relying party"] == "example.org")
        #expect(rows["User"] == "alice")
        #expect(rows["Security key"] == "Blue (virtual)")
        #expect(rows["Name"] == "(unnamed)", "no --name, and no terminal to ask")
        #expect(rows["Discoverable"] == "no")
        #expect(rows["Algorithm"] == "es256 (-7)")
        #expect(shown.lines.count == 8, "\(shown)")
        #expect(shown.errors.isEmpty || shown.errors.contains("Touch"), "\(shown)")
        let registrations = try await daemon.client().listRegistrations()
        #expect(registrations.map(\.id) == [try #require(rows["Credential ID"])])
    }

    @Test func registerWithEveryOptionSaysSo() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl([
            "register", "--rp", "example.org", "--rp-name", "Example", "--user", "alice", "--display-name", "Alice Liddell",
            "--user-id", Self.userID, "--resident", "--algorithm", "eddsa,es256", "--name", "Work", "--uv", "discouraged",
            "--attestation", "direct", "--origin", "https://login.example.org", "--authenticator", "v1", "--timeout", "20",
        ], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        let rows = shown.rows
        #expect(rows["Relying party"] == "example.org (Example)")
        #expect(rows["User"] == "alice (Alice Liddell)")
        #expect(rows["Name"] == "Work")
        #expect(rows["Discoverable"] == "yes (resident on the key)")
        #expect(rows["Algorithm"] == "eddsa (-8)")
        #expect(try await daemon.listKeys().first?.name == "Work", "the key took the name --name gave")
    }

    /// `--json`: the daemon's result as it came, one line.
    @Test func registerAndAssertJSON() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let registered = await authctl(["--json", "register", "--rp", "example.org", "--user", "alice", "--resident"], broker: daemon)
        #expect(registered.status == 0, "\(registered)")
        let created = try CredentialResult(try registered.json())
        let id = try #require(created.credential["id"]?.stringValue)
        #expect(created.registration?.rpId == "example.org")

        let asserted = await authctl(["assert", "--rp", "example.org", "--json"], broker: daemon)
        #expect(asserted.status == 0, "\(asserted)")
        #expect(try CredentialResult(try asserted.json()).credential["id"]?.stringValue == id)
    }

    /// `--format fido2-tools`: the lines fido2-cred -V and fido2-assert -V
    /// read (EndToEndTests has the tools verify them).
    @Test func fido2ToolsFormat() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let registered = await authctl(
            ["register", "--rp", "example.org", "--user", "alice", "--resident", "--format", "fido2-tools"], broker: daemon)
        #expect(registered.status == 0, "\(registered)")
        #expect(registered.lines.count >= 6, "\(registered)")
        #expect(registered.lines.dropFirst().first == "example.org")
        #expect(registered.lines.dropFirst(2).first == "packed", "fido2-cred -V needs an attestation")

        let asserted = await authctl(["assert", "--rp", "example.org", "--format", "fido2-tools"], broker: daemon)
        #expect(asserted.status == 0, "\(asserted)")
        #expect(asserted.lines.dropFirst().first == "example.org", "\(asserted)")
    }

    @Test func assertPrintsASummary() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let registered = await authctl(
            ["register", "--rp", "example.org", "--user", "alice", "--user-id", Self.userID, "--resident", "--name", "Work"], broker: daemon)
        let id = try #require(registered.rows["Credential ID"], "\(registered)")

        let shown = await authctl(["assert", "--rp", "example.org"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.lines.first == "Authenticated.")
        let rows = shown.rows
        #expect(rows["Credential ID"] == id)
        #expect(rows["User handle"] == Self.userID)
        #expect(rows["Security key"] == "Work")
        #expect(rows["Sign count"].flatMap(Int.init) != nil, "\(shown)")
        #expect(rows["Flags"]?.contains("UP") == true, "\(shown)")

        // A credential named by --credential, not discoverable.
        let other = await authctl(["register", "--rp", "example.com", "--user", "bob"], broker: daemon)
        let otherID = try #require(other.rows["Credential ID"], "\(other)")
        let named = await authctl(["assert", "--rp", "example.com", "--credential", otherID], broker: daemon)
        #expect(named.status == 0, "\(named)")
        #expect(named.rows["Credential ID"] == otherID)
        #expect(named.rows["User handle"] == nil, "a credential that is not discoverable returns no user handle")
    }

    /// No credential for the site: exit 1, the daemon's reason.
    @Test func assertWithNoCredentialExits1() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl(["assert", "--rp", "nowhere.example"], broker: daemon)
        #expect(shown.status == 1, "\(shown)")
        #expect(shown.errors.hasSuffix("authctl: authenticating: the key holds no matching credential (FIDO_ERR_NO_CREDENTIALS)\n"), "\(shown)")
        #expect(shown.output.isEmpty)
    }

    /// Two accounts on the key for the site: `--user` chooses; without it
    /// and without a terminal the command says which accounts there are.
    @Test func theAccountChooserIsAnsweredByUser() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let alice = await authctl(
            ["register", "--rp", "example.org", "--user", "alice", "--user-id", Self.userID, "--resident"], broker: daemon)
        #expect(alice.status == 0, "\(alice)")
        #expect(await authctl(["register", "--rp", "example.org", "--user", "bob", "--resident"], broker: daemon).status == 0)

        let unanswered = await authctl(["assert", "--rp", "example.org"], broker: daemon)
        #expect(unanswered.status == 2, "\(unanswered)")
        #expect(unanswered.errors.hasSuffix("authctl: the key holds 2 credentials for example.org (bob, alice); choose one with --user NAME\n"), "\(unanswered)")

        let nobody = await authctl(["assert", "--rp", "example.org", "--user", "carol"], broker: daemon)
        #expect(nobody.status == 1, "\(nobody)")
        #expect(nobody.errors.hasSuffix("authctl: the key holds no credential of user \"carol\" for example.org; its accounts: bob, alice\n"), "\(nobody)")

        let chosen = await authctl(["assert", "--rp", "example.org", "--user", "alice"], broker: daemon)
        #expect(chosen.status == 0, "\(chosen)")
        #expect(chosen.rows["Credential ID"] == alice.rows["Credential ID"])
        #expect(chosen.rows["User handle"] == Self.userID)
    }

    /// A key with a PIN: `--pin-fd` answers; with no PIN given and no
    /// terminal the prompt is cancelled (exit 2); a wrong PIN and nothing
    /// more to read cancels too, and the key counts the attempt.
    @Test func thePINComesFromPinFD() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234"])
        let register = ["register", "--rp", "example.org", "--user", "alice", "--uv", "required"]

        let unasked = await authctl(register, broker: daemon)
        #expect(unasked.status == 2, "\(unasked)")
        #expect(unasked.output.isEmpty)

        let refused = await authctl(register, broker: daemon, pins: ["0000"])
        #expect(refused.status == 2, "\(refused)")
        #expect(await authctl(["pin", "retries", "v1"], broker: daemon).rows["PIN"] == "7 attempts left")

        let registered = await authctl(register, broker: daemon, pins: ["1234"])
        #expect(registered.status == 0, "\(registered)")
        #expect(registered.lines.first == "Registered a credential.")
    }

    /// `--transaction`: the details are confirmed by `--yes` and refused by
    /// `--no` (exit 2); without either and without a terminal, refused.
    @Test func aTransactionIsConfirmedByYes() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        #expect(await authctl(["register", "--rp", "example.org", "--user", "alice", "--resident"], broker: daemon).status == 0)
        let assert = ["assert", "--rp", "example.org", "--transaction", "Amount=10 EUR", "--transaction", "To=Bob"]

        let confirmed = await authctl(assert + ["--yes"], broker: daemon)
        #expect(confirmed.status == 0, "\(confirmed)")
        #expect(confirmed.lines.first == "Authenticated.")

        for refusal in [["--no"], []] {
            let refused = await authctl(assert + refusal, broker: daemon)
            #expect(refused.status == 2, "\(refusal): \(refused)")
            #expect(refused.output.isEmpty)
        }
    }
}
