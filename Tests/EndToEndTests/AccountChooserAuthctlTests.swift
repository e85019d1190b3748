import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// The account chooser as the `authctl` binary shows it: `--user`, a
/// numbered list at a terminal, and what it says without either. (The
/// chooser itself, `ui.selectCredential`, is tested against the broker in
/// process: AuthDaemonTests.AccountChooserTests.)
@Suite(.timeLimit(.minutes(3))) struct AccountChooserAuthctlTests {
    static let pin = "1234"

    /// An account registered on the key: its credential id and user handle.
    struct Account {
        var credentialID: String
        var userID: [UInt8]
    }

    /// The daemon with one PIN-protected key holding `alice` (older) and
    /// `bob` (newer) for example.org.
    func keyWithTwoAccounts() async throws -> (DaemonProcess, alice: Account, bob: Account) {
        let daemon = try DaemonProcess(["--virtual-key", "name=Chooser key,pin=\(Self.pin)"])
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        defer { client.close() }
        var accounts: [Account] = []
        for user in ["alice", "bob"] {
            client.setUI(ScriptedUI(pins: [Self.pin], name: "Chooser key"))
            let userID = Array("user-\(user)".utf8)
            let created = try await client.createCredential(
                WebAuthnFixtures.createParams(user: user, userID: userID, residentKey: .required))
            accounts.append(Account(credentialID: try #require(created.credential["id"]?.stringValue), userID: userID))
        }
        return (daemon, accounts[0], accounts[1])
    }


    @Test func authctlTakesTheAccountFromUser() async throws {
        let (daemon, alice, bob) = try await keyWithTwoAccounts()
        let chosen = try authctl(daemon, ["--json", "assert", "--rp", "example.org", "--user", "alice"], pinFD: "\(Self.pin)\n")
        #expect(chosen.status == 0, "\(chosen)")
        #expect(try chosen.json()["credential"]?["id"]?.stringValue == alice.credentialID)

        let unknown = try authctl(daemon, ["assert", "--rp", "example.org", "--user", "carol"], pinFD: "\(Self.pin)\n")
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.standardError.contains("no credential of user \"carol\"") && unknown.standardError.contains("bob, alice"), "\(unknown)")

        // No terminal and no --user: it cannot ask, so it says how to choose.
        let unasked = try authctl(daemon, ["assert", "--rp", "example.org"], pinFD: "\(Self.pin)\n")
        #expect(unasked.status == 2, "\(unasked)")
        #expect(unasked.standardError.contains("--user NAME") && unasked.standardError.contains("bob, alice"), "\(unasked)")
        #expect(!unasked.standardOutput.contains(bob.credentialID))
    }

    @Test func atATerminalAuthctlShowsANumberedListOfAccounts() async throws {
        let (daemon, alice, _) = try await keyWithTwoAccounts()
        let session = try TerminalSession([builtProduct("authctl"), "--socket", daemon.socketPath, "assert", "--rp", "example.org"])
        #expect(session.waitFor("PIN for Chooser key"))
        session.type(Self.pin)
        #expect(session.waitFor("Which account for example.org?"))
        #expect(session.waitFor("1) bob  Bob"))
        #expect(session.waitFor("2) alice  Alice"))
        #expect(session.waitFor("Choice [1-2; empty or q cancels]: "))
        session.type("3")
        #expect(session.waitFor("Type a number from 1 to 2, or q."))
        session.type("2")
        let (status, transcript) = session.finish()
        #expect(status == 0, "\(transcript)\n\(daemon.log)")
        #expect(transcript.contains("Authenticated."))
        #expect(transcript.contains(alice.credentialID), "\(transcript)")
        #expect(transcript.contains("User handle") && transcript.contains(Base64URL.encode(alice.userID)), "\(transcript)")
    }
}
