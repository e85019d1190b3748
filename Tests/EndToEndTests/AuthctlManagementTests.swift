import AuthProtocol
import Foundation
import TestSupport
import Testing

/// `authctl pin`, `reset`, `credentials`, `fingerprints` and `config`
/// against the real daemon with virtual keys, run as a script runs them
/// (PINs on `--pin-fd`, no terminal) and at a terminal. The tests run as
/// root, so the daemon counts them among its admins. One test at a time,
/// as in AuthctlCredentialTests.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AuthctlManagementTests {
    /// The daemon with a virtual key for each spec, once it lists them all.
    func started(_ specs: String...) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(specs.flatMap { ["--virtual-key", $0] })
        _ = try await daemon.waitForKeys(specs.count)
        return daemon
    }

    /// Registers a discoverable credential for `user` at example.org on v1;
    /// returns its id (base64url).
    func registerResident(_ daemon: DaemonProcess, user: String, pinFD pins: String) throws -> String {
        let arguments = ["register", "--rp", "example.org", "--user", user, "--resident", "--authenticator", "v1", "--json"]
        let result = try authctl(daemon, arguments, pinFD: pins)
        try #require(result.status == 0, "register: \(result.standardError)\n\(daemon.log)")
        return try #require(try result.json()["credential"]?["id"]?.stringValue)
    }

    /// The credentials on v1, as `credentials list --json` gives them.
    func storedCredentials(_ daemon: DaemonProcess, pinFD pins: String) throws -> JSONValue {
        let result = try authctl(daemon, ["credentials", "list", "v1", "--json"], pinFD: pins)
        try #require(result.status == 0, "credentials list: \(result.standardError)\n\(daemon.log)")
        return try result.json()
    }

    @Test func setThePINFromAFileDescriptor() async throws {
        let daemon = try await started("name=K1")
        let none = try authctl(daemon, ["pin", "retries", "v1"])
        #expect(none.status == 0, "\(none.standardError)")
        #expect(none.standardOutput.contains("PIN:         no PIN set (authctl pin set v1)"), "\(none.standardOutput)")
        #expect(try pinRetries(daemon) == nil)
        // No terminal and no --pin-fd: nobody can give the PIN, so nothing is set.
        #expect(try authctl(daemon, ["pin", "set", "v1"]).status == 2)
        #expect(try authctl(daemon, ["info", "v1", "--json"]).json()["authenticator"]?["pinSet"] == false)

        // One line is the new PIN: no second copy from a file descriptor.
        let set = try authctl(daemon, ["pin", "set", "v1"], pinFD: "123456\n")
        #expect(set.status == 0, "\(set.standardError)\n\(daemon.log)")
        #expect(set.standardOutput == "Set the PIN of K1 (v1).\n")
        #expect(try authctl(daemon, ["info", "v1", "--json"]).json()["authenticator"]?["pinSet"] == true)
        #expect(try authctl(daemon, ["list", "--json"]).json()["authenticators"]?.arrayValue?.first?["pinSet"] == true)

        let retries = try authctl(daemon, ["pin", "retries", "v1"])
        #expect(retries.status == 0, "\(retries.standardError)")
        #expect(retries.standardOutput.contains("PIN:         8 attempts left"), "\(retries.standardOutput)")
        #expect(try pinRetries(daemon) == 8)

        // The key now wants that PIN.
        #expect(try authctl(daemon, ["credentials", "list", "v1"], pinFD: "123456\n").status == 0)
    }

    @Test func aNewPINTooShortIsAskedAgainWithTheReason() async throws {
        let daemon = try await started("name=K1")
        let set = try authctl(daemon, ["pin", "set", "v1"], pinFD: "12\n123456\n")
        #expect(set.status == 0, "\(set.standardError)\n\(daemon.log)")
        #expect(set.standardError.contains("the key refused the new PIN (too short: at least 4 characters)"), "\(set.standardError)")
        #expect(try authctl(daemon, ["credentials", "list", "v1"], pinFD: "123456\n").status == 0)
    }

    /// The daemon asks for the current PIN, then the new one, and tries
    /// both; a wrong current PIN is asked again (`invalid`) and the new
    /// one kept. So the lines are: current, new, current again.
    @Test func changeThePINAfterAWrongCurrentOne() async throws {
        let daemon = try await started("name=K1,pin=123456")

        // A wrong current PIN and no line after it: cancelled, one attempt spent.
        let wrong = try authctl(daemon, ["pin", "change", "v1"], pinFD: "000000\n654321\n")
        #expect(wrong.status == 2, "\(wrong.standardError)\n\(daemon.log)")
        #expect(try pinRetries(daemon) == 7)

        let changed = try authctl(daemon, ["pin", "change", "v1"], pinFD: "000000\n654321\n123456\n")
        #expect(changed.status == 0, "\(changed.standardError)\n\(daemon.log)")
        #expect(changed.standardOutput == "Changed the PIN of K1 (v1).\n")
        // Two wrong attempts (7, then 6) and a right one: CTAP sets the
        // counter back to its maximum when the PIN is right, so 8 again.
        #expect(try pinRetries(daemon) == 8)

        // The new PIN is the key's PIN now; the old one is wrong.
        #expect(try authctl(daemon, ["credentials", "list", "v1"], pinFD: "654321\n").status == 0)
        #expect(try authctl(daemon, ["credentials", "list", "v1"], pinFD: "123456\n").status == 2)
    }

    /// Credential management needs the PIN (CTAP wants a PIN token for
    /// it), so the keys that are reset here have one.
    @Test func resetWithinTheWindowErasesTheKey() async throws {
        // The window (10 s from plug-in, as CTAP says) starts with the daemon.
        let daemon = try await started("name=K1,pin=123456")
        _ = try registerResident(daemon, user: "alice", pinFD: "123456\n")
        #expect(try storedCredentials(daemon, pinFD: "123456\n")["existing"] == 1)

        let reset = try authctl(daemon, ["reset", "v1", "--yes-really"])
        #expect(reset.status == 0, "\(reset.standardError)\n\(daemon.log)")
        #expect(reset.standardError.contains("Touch the key to confirm the reset"), "\(reset.standardError)")
        #expect(reset.standardOutput.hasPrefix("Reset K1 (v1)"))

        // The PIN went with the credentials; with a new one, the key shows none.
        let info = try authctl(daemon, ["info", "v1", "--json"]).json()
        #expect(info["authenticator"]?["pinSet"] == false)
        #expect(info["info"]?["remainingDiscoverableCredentials"] == 25)
        #expect(try authctl(daemon, ["pin", "set", "v1"], pinFD: "24681012\n").status == 0)
        let after = try storedCredentials(daemon, pinFD: "24681012\n")
        #expect(after["existing"] == 0)
        #expect(after["relyingParties"]?.arrayValue?.isEmpty == true)
        let listed = try authctl(daemon, ["credentials", "list", "v1"], pinFD: "24681012\n")
        #expect(listed.standardOutput == "No credentials stored on the key.\n0 stored, 25 slots free\n")
    }

    @Test func resetAfterTheWindowSaysToPlugTheKeyBackIn() async throws {
        let daemon = try await started("name=K1,pin=123456,reset-window=0s")
        _ = try registerResident(daemon, user: "alice", pinFD: "123456\n")
        let reset = try authctl(daemon, ["reset", "v1", "--yes-really"])
        #expect(reset.status == 1, "\(reset.standardError)\n\(daemon.log)")
        #expect(reset.standardError.contains("plug it back in"), "\(reset.standardError)")
        #expect(try storedCredentials(daemon, pinFD: "123456\n")["existing"] == 1)
    }

    @Test func resetWithoutATerminalOrYesReallyErasesNothing() async throws {
        let daemon = try await started("name=K1,pin=123456")
        _ = try registerResident(daemon, user: "alice", pinFD: "123456\n")
        let reset = try authctl(daemon, ["reset", "v1"])
        #expect(reset.status == 2, "\(reset.standardError)\n\(daemon.log)")
        #expect(reset.standardError.contains("--yes-really"), "\(reset.standardError)")
        #expect(try storedCredentials(daemon, pinFD: "123456\n")["existing"] == 1)
    }

    @Test func storedCredentialsListUpdateAndDeleteByPrefix() async throws {
        let daemon = try await started("name=K1,pin=123456")
        let alice = try registerResident(daemon, user: "alice", pinFD: "123456\n")
        let bob = try registerResident(daemon, user: "bob", pinFD: "123456\n")

        let listed = try authctl(daemon, ["credentials", "list", "v1"], pinFD: "123456\n")
        #expect(listed.status == 0, "\(listed.standardError)\n\(daemon.log)")
        #expect(listed.standardOutput.hasPrefix("RP"))
        for cell in ["example.org", "alice", "bob", String(alice.prefix(16)) + "…", "uv optional", "2 stored, 23 slots free"] {
            #expect(listed.standardOutput.contains(cell), "\(cell) in\n\(listed.standardOutput)")
        }

        // Update and delete list the key first, to find the credential:
        // two calls, one PIN.
        let bobBefore = try #require(try storedCredentials(daemon, pinFD: "123456\n")["relyingParties"]?.arrayValue?.first?["credentials"]?
            .arrayValue?.first { $0["credentialId"]?.stringValue == bob })
        let update = ["credentials", "update", "v1", String(bob.prefix(16)) + "…", "--user", "robert", "--display-name", "Robert B"]
        let updated = try authctl(daemon, update, pinFD: "123456\n")
        #expect(updated.status == 0, "\(updated.standardError)\n\(daemon.log)")
        let bobAfter = try #require(try storedCredentials(daemon, pinFD: "123456\n")["relyingParties"]?.arrayValue?.first?["credentials"]?
            .arrayValue?.first { $0["credentialId"]?.stringValue == bob })
        #expect(bobAfter["user"]?["name"] == "robert")
        #expect(bobAfter["user"]?["displayName"] == "Robert B")
        #expect(bobAfter["user"]?["id"] == bobBefore["user"]?["id"], "the user id stays")

        let unknown = try authctl(daemon, ["credentials", "delete", "v1", "ZZZZZZZZZZZZ"], pinFD: "123456\n")
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("no credential on v1 has an id that starts ZZZZZZZZZZZZ"), "\(unknown.standardError)")
        let tooShort = try authctl(daemon, ["credentials", "delete", "v1", String(alice.prefix(4))], pinFD: "123456\n")
        #expect(tooShort.status == 1, "a few characters name no credential: \(tooShort.standardError)")

        let deleted = try authctl(daemon, ["credentials", "delete", "v1", String(alice.prefix(16))], pinFD: "123456\n")
        #expect(deleted.status == 0, "\(deleted.standardError)\n\(daemon.log)")
        let left = try storedCredentials(daemon, pinFD: "123456\n")
        #expect(left["existing"] == 1)
        #expect(left["relyingParties"]?.arrayValue?.first?["credentials"]?.arrayValue?.first?["credentialId"]?.stringValue == bob)
    }

    @Test func enrollListRenameAndDeleteAFingerprint() async throws {
        let daemon = try await started("name=K1,pin=123456")
        let samples = try #require(try authctl(daemon, ["fingerprints", "info", "v1", "--json"]).json()["samplesRequired"]?.integerValue.map(Int.init))

        // Enrolling and naming need the PIN; it is asked once.
        let enrolled = try authctl(daemon, ["fingerprints", "enroll", "v1", "--name", "Thumb"], pinFD: "123456\n")
        #expect(enrolled.status == 0, "\(enrolled.standardError)\n\(daemon.log)")
        for sample in 1...samples {
            #expect(enrolled.standardError.contains("Touch the sensor (sample \(sample))…"), "\(enrolled.standardError)")
        }
        #expect(enrolled.standardError.contains("Sample captured, \(samples - 1) to go"))
        #expect(enrolled.standardError.contains("Sample captured, done"))
        #expect(enrolled.standardOutput.hasSuffix(" \"Thumb\".\n"), "\(enrolled.standardOutput)")
        #expect(try authctl(daemon, ["list", "--json"]).json()["authenticators"]?.arrayValue?.first?["uvSet"] == true)

        let listed = try authctl(daemon, ["fingerprints", "list", "v1"], pinFD: "123456\n")
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(listed.standardOutput.contains("Thumb"))
        let json = try authctl(daemon, ["fingerprints", "list", "v1", "--json"], pinFD: "123456\n").json()
        let template = try #require(json["fingerprints"]?.arrayValue?.first?["templateId"]?.stringValue)

        let renamed = try authctl(daemon, ["fingerprints", "rename", "v1", template, "Index"], pinFD: "123456\n")
        #expect(renamed.status == 0, "\(renamed.standardError)\n\(daemon.log)")
        let after = try authctl(daemon, ["fingerprints", "list", "v1"], pinFD: "123456\n").standardOutput
        #expect(after.contains("Index") && !after.contains("Thumb"), "\(after)")

        let deleted = try authctl(daemon, ["fingerprints", "delete", "v1", template], pinFD: "123456\n")
        #expect(deleted.status == 0, "\(deleted.standardError)\n\(daemon.log)")
        #expect(try authctl(daemon, ["fingerprints", "list", "v1"], pinFD: "123456\n").standardOutput.hasPrefix("No fingerprints"))
    }

    @Test func alwaysUVAndTheMinimumPINLength() async throws {
        let daemon = try await started("name=K1", "name=K2,pin=123456")
        // A key without a PIN turns it on without one.
        let on = try authctl(daemon, ["config", "always-uv", "v1", "on"])
        #expect(on.status == 0, "\(on.standardError)\n\(daemon.log)")
        #expect(on.standardOutput == "Always-UV is on for K1 (v1): every use needs the PIN or a fingerprint.\n")
        #expect(try authctl(daemon, ["info", "v1", "--json"]).json()["authenticator"]?["alwaysUv"] == true)

        // With a PIN, both ways need it.
        #expect(try authctl(daemon, ["config", "always-uv", "v2", "on"], pinFD: "123456\n").status == 0)
        #expect(try authctl(daemon, ["info", "v2", "--json"]).json()["authenticator"]?["alwaysUv"] == true)
        #expect(try authctl(daemon, ["config", "always-uv", "v2", "off"], pinFD: "123456\n").status == 0)
        #expect(try authctl(daemon, ["info", "v2", "--json"]).json()["authenticator"]?["alwaysUv"] == false)

        let raised = try authctl(daemon, ["config", "min-pin-length", "v2", "8", "--rp", "example.org"], pinFD: "123456\n")
        #expect(raised.status == 0, "\(raised.standardError)\n\(daemon.log)")
        #expect(try authctl(daemon, ["info", "v2", "--json"]).json()["info"]?["minPinLength"] == 8)
        // A new PIN must now be 8 characters long.
        let change = try authctl(daemon, ["pin", "change", "v2"], pinFD: "123456\n7654321\n87654321\n")
        #expect(change.status == 0, "\(change.standardError)\n\(daemon.log)")
        #expect(change.standardError.contains("too short: at least 8 characters"), "\(change.standardError)")
    }

    @Test func atATerminalANewPINIsTypedTwice() async throws {
        let daemon = try await started("name=K1")
        let session = try TerminalSession([builtProduct("authctl"), "--socket", daemon.socketPath, "pin", "set", "v1"])
        #expect(session.waitFor("New PIN for K1 (at least 4 characters): "))
        session.type("12")
        #expect(session.waitFor("That PIN is too short: at least 4 characters; choose another."))
        #expect(session.waitFor("New PIN for K1 (at least 4 characters): "))
        session.type("246810")
        #expect(session.waitFor("New PIN again: "))
        session.type("246811")
        #expect(session.waitFor("The two PINs differ; try again."))
        #expect(session.waitFor("New PIN for K1 (at least 4 characters): "))
        session.type("246810")
        #expect(session.waitFor("New PIN again: "))
        session.type("246810")
        let (status, transcript) = session.finish()
        #expect(status == 0, "\(transcript)\n\(daemon.log)")
        #expect(transcript.contains("Set the PIN of K1 (v1)."))
        #expect(!transcript.contains("246810") && !transcript.contains("246811"), "a PIN was echoed:\n\(transcript)")
        #expect(try authctl(daemon, ["credentials", "list", "v1"], pinFD: "246810\n").status == 0)
    }

    @Test func atATerminalResetWantsTheProductNameTyped() async throws {
        let daemon = try await started("name=K1,pin=123456")
        _ = try registerResident(daemon, user: "alice", pinFD: "123456\n")
        let command = [builtProduct("authctl"), "--socket", daemon.socketPath, "reset", "v1"]

        let refused = try TerminalSession(command)
        #expect(refused.waitFor("erases every credential on it"))
        #expect(refused.waitFor("Type the key's product name, K1, to reset it: "))
        refused.type("yes")
        #expect(refused.finish().status == 2)
        #expect(try storedCredentials(daemon, pinFD: "123456\n")["existing"] == 1)

        let confirmed = try TerminalSession(command)
        #expect(confirmed.waitFor("Type the key's product name, K1, to reset it: "))
        confirmed.type("K1")
        let (status, transcript) = confirmed.finish()
        #expect(status == 0, "\(transcript)\n\(daemon.log)")
        #expect(transcript.contains("Touch the key to confirm the reset"))
        #expect(try authctl(daemon, ["info", "v1", "--json"]).json()["authenticator"]?["pinSet"] == false)
    }

    @Test(arguments: [
        ["pin"],
        ["pin", "set"],
        ["pin", "reset", "v1"],
        ["pin", "set", "v1", "123456"],
        ["pin", "change", "v1", "--rp", "example.org"],
        ["reset"],
        ["reset", "v1", "--yes"],
        ["credentials", "list"],
        ["credentials", "delete", "v1"],
        ["credentials", "update", "v1", "AAAAAAAAAAAA"],
        ["credentials", "list", "v1", "--rp", "a.example", "--rp", "b.example"],
        ["credentials", "delete", "v1", "AAAAAAAAAAAA", "--user", "bob"],
        ["fingerprints", "enroll"],
        ["fingerprints", "rename", "v1", "AAAA"],
        ["fingerprints", "list", "v1", "--name", "Thumb"],
        ["config", "always-uv", "v1", "maybe"],
        ["config", "always-uv", "v1", "on", "--force-change"],
        ["config", "min-pin-length", "v1", "3"],
        ["config", "min-pin-length", "v1", "64"],
        ["config", "min-pin-length", "v1", "six"],
        ["config", "frobnicate", "v1"],
        ["credentials", "list", "v1", "--pin-fd", "99"],
    ])
    func usageErrorsExit64WithoutConnecting(_ arguments: [String]) throws {
        // No daemon listens there: a usage error must be found before connecting (else 69).
        let result = try run(builtProduct("authctl"), ["--socket", "/tmp/authkeyd-nobody-home.sock"] + arguments)
        #expect(result.status == 64, "\(arguments): \(result.standardError)")
    }
}
