import AuthProtocol
import Foundation
import SystemKit
import TestSupport
import Testing

/// `authctl register`, `assert` and `registrations` against the real
/// daemon with virtual keys: run as a script runs them (no terminal, every
/// answer on the command line), and at a terminal. One test at a time: each
/// starts a daemon and several authctl processes, and the timing tests of
/// the other suites should not pay for them all at once.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AuthctlCredentialTests {
    static let registerAlice = ["register", "--rp", "example.org", "--user", "alice"]

    /// Registers alice at example.org on key v1; returns the credential id (base64url).
    func register(_ daemon: DaemonProcess, _ extra: [String] = [], pins: String? = nil) throws -> String {
        let result = try authctl(daemon, Self.registerAlice + ["--authenticator", "v1", "--json"] + extra, pins: pins)
        try #require(result.status == 0, "register: \(result.standardError)\n\(daemon.log)")
        return try #require(try result.json()["credential"]?["id"]?.stringValue)
    }

    @Test func scriptedRegisterNamesTheKeyAndPrintsTheResult() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1", "--virtual-key", "name=K2"])
        _ = try await daemon.waitForKeys(2)
        let result = try authctl(daemon, Self.registerAlice + ["--authenticator", "v1", "--name", "Work key", "--json"])
        #expect(result.status == 0, "\(result.standardError)\n\(daemon.log)")
        #expect(result.standardOutput.filter { $0 == "\n" }.count == 1, "one line of JSON")
        let output = try result.json()
        #expect(output["credential"]?["response"]?["attestationObject"]?.stringValue?.isEmpty == false)
        #expect(output["registration"]?["friendlyName"] == "Work key")
        #expect(output["registration"]?["rpId"] == "example.org")
        #expect(output["registration"]?["user"]?["name"] == "alice")

        let summary = try authctl(daemon, ["register", "--rp", "example.org", "--user", "bob", "--authenticator", "v2", "--resident"])
        #expect(summary.status == 0, "\(summary.standardError)")
        #expect(summary.standardOutput.hasPrefix("Registered"))
        #expect(summary.standardOutput.contains("K2"))
        #expect(summary.standardOutput.contains("Discoverable:  yes"))
    }

    @Test func withoutATerminalOrAnAuthenticatorTheSelectionIsCancelled() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1", "--virtual-key", "name=K2"])
        _ = try await daemon.waitForKeys(2)
        let result = try authctl(daemon, Self.registerAlice)
        #expect(result.status == 2, "\(result.standardError)\n\(daemon.log)")
    }

    @Test func registerThenAssertWithTheCredential() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1"])
        _ = try await daemon.waitForKeys(1)
        let id = try register(daemon)
        let result = try authctl(daemon, ["assert", "--rp", "example.org", "--credential", id])
        #expect(result.status == 0, "\(result.standardError)\n\(daemon.log)")
        #expect(result.standardOutput.contains(id))
        #expect(result.standardOutput.contains("Flags:         UP"))

        // No --credential: a discoverable credential, and its user handle.
        let discoverable = try register(daemon, ["--resident", "--user-id", "dXNlci0x"])
        let json = try authctl(daemon, ["assert", "--rp", "example.org", "--authenticator", "v1", "--json"]).json()
        #expect(json["credential"]?["id"]?.stringValue == discoverable)
        #expect(json["credential"]?["response"]?["userHandle"] == "dXNlci0x")
    }

    /// `type` is both `--algorithm` and the tools' name of it.
    @Test(arguments: ["es256", "eddsa"]) func fido2ToolsVerifyWhatAuthctlPrints(_ type: String) async throws {
        try #require(isInstalled("fido2-cred") && isInstalled("fido2-assert"), "needs Debian's fido2-tools")
        let daemon = try DaemonProcess(["--virtual-key", "name=K1"])
        _ = try await daemon.waitForKeys(1)
        let registered = try authctl(
            daemon, Self.registerAlice + ["--authenticator", "v1", "--format", "fido2-tools", "--algorithm", type])
        try #require(registered.status == 0, "\(registered.standardError)\n\(daemon.log)")
        let lines = registered.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "packed attestation with a certificate: \(lines)")
        #expect(lines[1] == "example.org" && lines[2] == "packed")
        #expect(lines.allSatisfy { !$0.contains("-") && !$0.contains("_") }, "standard base64, not base64url")

        let verified = try run("/usr/bin/fido2-cred", ["-V", type], input: registered.standardOutput)
        try #require(verified.status == 0, "fido2-cred -V \(type): \(verified.standardError)")
        let credentialID = String(verified.standardOutput.prefix { $0 != "\n" })
        #expect(credentialID == lines[4])
        let directory = TemporaryDirectory()
        let publicKey = directory.file("credential.pem")
        try String(verified.standardOutput.drop { $0 != "\n" }.dropFirst()).write(toFile: publicKey, atomically: true, encoding: .utf8)

        let base64url = credentialID.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let asserted = try authctl(daemon, ["assert", "--rp", "example.org", "--credential", base64url, "--format", "fido2-tools"])
        try #require(asserted.status == 0, "\(asserted.standardError)\n\(daemon.log)")
        let accepted = try run("/usr/bin/fido2-assert", ["-V", "-p", publicKey, type], input: asserted.standardOutput)
        #expect(accepted.status == 0, "fido2-assert -V: \(accepted.standardError)\n\(asserted.standardOutput)")

        // The same verifier refuses the assertion for another RP.
        let forged = asserted.standardOutput.replacingOccurrences(of: "\nexample.org\n", with: "\nexample.com\n")
        #expect(try run("/usr/bin/fido2-assert", ["-V", publicKey, type], input: forged).status != 0)
    }

    /// authctl's SHA-256 and base64 against coreutils': the same
    /// challenge and origin make the same clientDataJSON, so the hash
    /// `--format fido2-tools` prints is the one of what `--json` shows.
    @Test func theClientDataHashIsTheSHA256OfTheClientData() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1"])
        _ = try await daemon.waitForKeys(1)
        let id = try register(daemon)
        let fixed = [
            "assert", "--rp", "example.org", "--credential", id, "--challenge", "Y2hhbGxlbmdlLW51bWJlci0x",
            "--origin", "https://example.org",
        ]
        let response = try authctl(daemon, fixed + ["--json"]).json()["credential"]?["response"]
        let clientData = try #require(response?["clientDataJSON"]?.stringValue.flatMap(Base64URL.decode))
        let tools = try authctl(daemon, fixed + ["--format", "fido2-tools"])
        try #require(tools.status == 0, "\(tools.standardError)")
        let printed = try #require(Data(base64Encoded: String(tools.standardOutput.prefix { $0 != "\n" })))
        let reference = try run("/usr/bin/sha256sum", [], input: String(decoding: clientData, as: UTF8.self))
        #expect(hex(Array(printed)) == String(reference.standardOutput.prefix(64)))
    }

    @Test func thePINComesFromAFileDescriptor() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1,pin=123456"])
        _ = try await daemon.waitForKeys(1)
        let id = try register(daemon, ["--pin-fd", "3", "--uv", "required"], pins: "123456\n")
        let asserted = try authctl(
            daemon, ["assert", "--rp", "example.org", "--credential", id, "--uv", "required", "--pin-fd", "3"], pins: "123456\n")
        #expect(asserted.status == 0, "\(asserted.standardError)\n\(daemon.log)")
        #expect(asserted.standardOutput.contains("UP UV"))
    }

    @Test func aWrongPINWithNoMoreInputIsCancelled() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1,pin=123456"])
        _ = try await daemon.waitForKeys(1)
        let withPIN = Self.registerAlice + ["--authenticator", "v1", "--uv", "required", "--pin-fd", "3"]
        let result = try authctl(daemon, withPIN, pins: "000000\n")
        #expect(result.status == 2, "\(result.standardError)\n\(daemon.log)")
        #expect(result.standardError.contains("cancelled"))
        // A second line answers the second prompt ("wrong PIN, again").
        let retried = try authctl(daemon, withPIN, pins: "000000\n123456\n")
        #expect(retried.status == 0, "\(retried.standardError)\n\(daemon.log)")
    }

    @Test func aTransactionIsSignedOnlyWhenConfirmed() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1"])
        _ = try await daemon.waitForKeys(1)
        let id = try register(daemon)
        let details = ["assert", "--rp", "example.org", "--credential", id, "--transaction", "Amount=10", "--transaction", "Payee=Bob"]
        let confirmed = try authctl(daemon, details + ["--yes", "--json"])
        #expect(confirmed.status == 0, "\(confirmed.standardError)\n\(daemon.log)")
        let clientData = try #require(try confirmed.json()["credential"]?["response"]?["clientDataJSON"]?.stringValue)
        let signed = String(decoding: try #require(Base64URL.decode(clientData)), as: UTF8.self)
        #expect(signed.contains("Amount") && signed.contains("Bob"), "the signature commits to the details: \(signed)")

        #expect(try authctl(daemon, details + ["--no"]).status == 2)
        #expect(try authctl(daemon, details).status == 2, "no terminal and no --yes: cancelled")
    }

    @Test func registrationsListRenameDelete() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1"])
        _ = try await daemon.waitForKeys(1)
        let id = try register(daemon, ["--name", "Work key"])

        let table = try authctl(daemon, ["registrations", "list"])
        #expect(table.status == 0, "\(table.standardError)\n\(daemon.log)")
        #expect(table.standardOutput.hasPrefix("ID"))
        for column in ["example.org", "alice", "Work key", String(id.prefix(16))] {
            #expect(table.standardOutput.contains(column), "\(column) in\n\(table.standardOutput)")
        }

        #expect(try authctl(daemon, ["registrations", "rename", id, "Home key"]).status == 0)
        let listed = try authctl(daemon, ["registrations", "list", "--json"]).json()
        #expect(listed["registrations"]?.arrayValue?.count == 1)
        #expect(listed["registrations"]?.arrayValue?.first?["friendlyName"] == "Home key")

        // The start of the id, as the table shows it, names it as well.
        #expect(try authctl(daemon, ["registrations", "rename", String(id.prefix(16)) + "…", "Spare key"]).status == 0)
        #expect(try authctl(daemon, ["registrations", "list"]).standardOutput.contains("Spare key"))

        let deleted = try authctl(daemon, ["registrations", "delete", id])
        #expect(deleted.status == 0, "\(deleted.standardError)")
        let empty = try authctl(daemon, ["registrations", "list", "--json"]).json()
        #expect(empty["registrations"]?.arrayValue?.isEmpty == true)
    }

    @Test func atATerminalAuthctlAsksForTheKeyThePINAndAName() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1", "--virtual-key", "name=K2,pin=654321"])
        _ = try await daemon.waitForKeys(2)
        let session = try TerminalSession([builtProduct("authctl"), "--socket", daemon.socketPath] + Self.registerAlice)
        #expect(session.waitFor("t) touch the key you mean"))
        #expect(session.waitFor("Choice"))
        session.type("2")
        #expect(session.waitFor("PIN for K2 (8 attempts left): "))
        session.type("000000")
        #expect(session.waitFor("Wrong PIN."))
        #expect(session.waitFor("PIN for K2 (7 attempts left): "))
        session.type("654321")
        #expect(session.waitFor("Name this security key [K2]: "))
        session.type("")
        let (status, transcript) = session.finish()
        #expect(status == 0, "\(transcript)\n\(daemon.log)")
        #expect(transcript.contains("Name:          K2"))
        #expect(!transcript.contains("000000") && !transcript.contains("654321"), "a PIN was echoed:\n\(transcript)")
    }

    @Test func ctrlCAtThePINPromptLeavesEchoOn() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1,pin=654321"])
        _ = try await daemon.waitForKeys(1)
        let authctl = [builtProduct("authctl"), "--socket", daemon.socketPath] + Self.registerAlice
        // The shell survives the Ctrl-C, to report how authctl ended and how it left the terminal.
        let session = try TerminalSession(["/bin/sh", "-c", "trap : INT; \"$@\"; echo \"exit=$?\"; stty -a", "sh"] + authctl)
        #expect(session.waitFor("PIN for K1"))
        session.type("65", newline: false)
        session.type("\u{03}", newline: false)
        #expect(session.waitFor("exit=130"))
        let (_, transcript) = session.finish()
        #expect(transcript.contains(" echo ") && !transcript.contains("-echo "), "\(transcript)")
    }

    @Test(arguments: [
        ["register", "--user", "alice"],
        ["register", "--rp", "example.org"],
        registerAlice + ["--uv", "sometimes"],
        registerAlice + ["--attestation", "enterprise"],
        registerAlice + ["--frobnicate"],
        registerAlice + ["--json", "--format", "fido2-tools"],
        registerAlice + ["--yes", "--no"],
        registerAlice + ["--pin-fd", "99"],
        registerAlice + ["--credential", "AAAA"],
        registerAlice + ["--rp", "example.com"],
        ["assert"],
        ["assert", "--rp", "example.org", "--transaction", "no-equals-sign"],
        ["assert", "--rp", "example.org", "--credential", "not base64url!"],
        ["assert", "--rp", "example.org", "--timeout", "soon"],
        ["assert", "--rp", "example.org", "--challenge", "dG9vIHNob3J0"],
        ["assert", "--rp", "example.org", "--name", "Work key"],
        ["registrations"],
        ["registrations", "rename", "only-an-id"],
        ["registrations", "delete"],
        ["list", "--rp", "example.org"],
    ])
    func usageErrorsExit64WithoutConnecting(_ arguments: [String]) throws {
        // No daemon listens there: a usage error must be found before connecting (else 69).
        let result = try run(builtProduct("authctl"), ["--socket", "/tmp/authkeyd-nobody-home.sock"] + arguments)
        #expect(result.status == 64, "\(arguments): \(result.standardError)")
    }
}
