import AuthClient
import AuthProtocol
import BrokerTestSupport
import Testing

/// The key-management subcommands (pin, credentials, reset, config,
/// fingerprints) against a virtual key: PINs from `--pin-fd`, what each
/// prints for people and with `--json`.
@Suite(.timeLimit(.minutes(2))) struct ManagementCommandTests {
    @Test func pinSetRetriesAndChange() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let before = await authctl(["pin", "retries", "v1"], broker: daemon)
        #expect(before.status == 0, "\(before)")
        #expect(before.output == "PIN:          no PIN set (authctl pin set v1)\nFingerprint:  no fingerprint sensor\n"
            || before.rows["PIN"] == "no PIN set (authctl pin set v1)", "\(before)")

        let set = await authctl(["pin", "set", "v1"], broker: daemon, pins: ["4321"])
        #expect(set.status == 0, "\(set)")
        #expect(set.output == "Set the PIN of Blue (v1).\n")

        let changed = await authctl(["pin", "change", "v1"], broker: daemon, pins: ["4321", "98765"])
        #expect(changed.status == 0, "\(changed)")
        #expect(changed.output == "Changed the PIN of Blue (v1).\n")

        let retries = await authctl(["pin", "retries", "v1", "--json"], broker: daemon)
        #expect(try JSONValueDecoder().decode(RetriesResult.self, from: try retries.json()).pinRetries == 8)
    }

    /// A new PIN the key refuses: authctl says why before the next line is read.
    @Test func aRefusedNewPINIsExplained() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let set = await authctl(["pin", "set", "v1"], broker: daemon, pins: ["12", "123456"])
        #expect(set.status == 0, "\(set)")
        #expect(set.errors.contains("authctl: the key refused the new PIN (too short: at least 4 characters)\n"), "\(set)")
    }

    @Test func credentialsListUpdateAndDelete() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234"])
        let registered = await authctl(
            ["register", "--rp", "example.org", "--user", "alice", "--resident", "--name", "Work"], broker: daemon, pins: ["1234"])
        let id = try #require(registered.rows["Credential ID"], "\(registered)")
        let short = String(id.prefix(16)) + "…"

        let listed = await authctl(["credentials", "list", "v1"], broker: daemon, pins: ["1234"])
        #expect(listed.status == 0, "\(listed)")
        let cells = listed.lines.dropFirst().first?.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(cells?.first == "example.org", "\(listed)")
        #expect(cells?.contains(short) == true, "\(listed)")
        #expect(listed.lines.last?.hasPrefix("1 stored, ") == true, "\(listed)")

        let unknown = await authctl(["credentials", "delete", "v1", "ZZZZZZZZZZ"], broker: daemon, pins: ["1234"])
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.errors == "authctl: no credential on v1 has an id that starts ZZZZZZZZZZ (give at least 8 characters; see authctl credentials list v1)\n")

        let updated = await authctl(
            ["credentials", "update", "v1", String(id.prefix(8)), "--display-name", "Alice L"], broker: daemon, pins: ["1234"])
        #expect(updated.status == 0, "\(updated)")
        #expect(updated.output == "Updated \(short): the user is now alice (Alice L).\n")

        let deleted = await authctl(["credentials", "delete", "v1", short], broker: daemon, pins: ["1234"])
        #expect(deleted.status == 0, "\(deleted)")
        #expect(deleted.output == "Deleted \(short) (alice (Alice L) at example.org) from the key.\n")

        let empty = await authctl(["credentials", "list", "v1", "--rp", "example.org"], broker: daemon, pins: ["1234"])
        #expect(empty.lines.first == "No credentials stored on the key.", "\(empty)")
    }

    /// Without a PIN where the key has one, and no terminal: cancelled, exit 2.
    @Test func aManagementCallWithoutItsPINIsCancelled() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234"])
        let shown = await authctl(["credentials", "list", "v1"], broker: daemon)
        #expect(shown.status == 2, "\(shown)")
        #expect(shown.output.isEmpty)
    }

    /// (The key's reset window is widened: the test is of the confirmation,
    /// and a busy machine, the sanitizers' runs side by side, can take more
    /// than CTAP's 10 s from the key's start to its reset.)
    @Test func resetNeedsAConfirmation() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234,reset-window=600s"])
        let unconfirmed = await authctl(["reset", "v1"], broker: daemon)
        #expect(unconfirmed.status == 2)
        #expect(unconfirmed.errors == "authctl: reset erases every credential on the key: confirm it at a terminal, or give --yes-really\n")
        #expect(try await daemon.listKeys().first?.pinSet == true)

        let reset = await authctl(["reset", "v1", "--yes-really"], broker: daemon)
        #expect(reset.status == 0, "\(reset)")
        #expect(reset.output == "Reset Blue (v1): no credentials, no PIN, no fingerprints.\n")
        #expect(reset.errors.contains("Touch the key to confirm the reset…\n"), "\(reset)")
        #expect(try await daemon.listKeys().first?.pinSet == false)
    }

    @Test func configAlwaysUVAndMinimumPINLength() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234"])
        let on = await authctl(["config", "always-uv", "v1", "on"], broker: daemon, pins: ["1234"])
        #expect(on.status == 0, "\(on)")
        #expect(on.output == "Always-UV is on for Blue (v1): every use needs the PIN or a fingerprint.\n")

        let length = await authctl(
            ["config", "min-pin-length", "v1", "6", "--rp", "example.org", "--force-change"], broker: daemon, pins: ["1234"])
        #expect(length.status == 0, "\(length)")
        #expect(length.lines == [
            "Blue (v1) now takes PINs of at least 6 characters.", "These sites may read that minimum: example.org.",
            "The key asks for a new PIN before it is used again (authctl pin change).",
        ])
    }

    @Test func fingerprints() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234,fingerprint=yes"])
        let info = await authctl(["fingerprints", "info", "v1"], broker: daemon)
        #expect(info.status == 0, "\(info)")
        #expect(info.rows["Sensor"] == "touch", "\(info)")
        #expect(info.rows["Samples to enroll"].flatMap(Int.init) != nil, "\(info)")

        let none = await authctl(["fingerprints", "list", "v1"], broker: daemon, pins: ["1234"])
        #expect(none.status == 0, "\(none)")
        #expect(none.output == "No fingerprints. authctl fingerprints enroll adds one.\n")

        let enrolled = await authctl(["fingerprints", "enroll", "v1", "--name", "thumb"], broker: daemon, pins: ["1234"])
        #expect(enrolled.status == 0, "\(enrolled)")
        #expect(enrolled.output.hasPrefix("Enrolled fingerprint "), "\(enrolled)")
        #expect(enrolled.output.hasSuffix(" \"thumb\".\n"), "\(enrolled)")
        #expect(enrolled.errors.contains("Sample captured, done\n"), "the cues count the samples: \(enrolled)")

        let listed = await authctl(["fingerprints", "list", "v1", "--json"], broker: daemon, pins: ["1234"])
        let fingerprints = try JSONValueDecoder().decode(FingerprintList.self, from: try listed.json()).fingerprints
        #expect(fingerprints.map(\.name) == ["thumb"])
        let template = try #require(fingerprints.first?.templateId)

        let renamed = await authctl(["fingerprints", "rename", "v1", template, "index"], broker: daemon, pins: ["1234"])
        #expect(renamed.output == "Renamed fingerprint \(template) \"index\".\n", "\(renamed)")

        let deleted = await authctl(["fingerprints", "delete", "v1", template], broker: daemon, pins: ["1234"])
        #expect(deleted.output == "Deleted fingerprint \(template).\n", "\(deleted)")
    }
}
