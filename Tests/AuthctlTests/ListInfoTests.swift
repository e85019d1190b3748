import AuthProtocol
import BrokerTestSupport
import Testing

/// `authctl list` and `authctl info`, the one-call commands: their tables
/// for people and, with `--json`, the daemon's own result.
@Suite struct ListInfoTests {
    @Test func listShowsATableOfTheKeys() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234", "--virtual-key", "name=Green,fingerprint=no"])
        let shown = await authctl(["list"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.lines == [
            "ID  NAME  PRODUCT  TRANSPORT  PIN      UV            RESIDENT KEYS",
            "v1  -     Blue     virtual    set      not enrolled  yes",
            "v2  -     Green    virtual    not set  -             yes",
        ], "\(shown)")
        #expect(shown.errors.isEmpty)
    }

    @Test func listWithNoKeysSaysWhatToDo() async throws {
        let daemon = try await InProcessBroker([])
        let shown = await authctl(["list"], broker: daemon)
        #expect(shown.status == 0)
        #expect(shown.output == "No security keys. Plug one in, or see authkeyd(8) for virtual keys.\n")
    }

    /// `--json` prints the daemon's result, one line, as the protocol has it.
    @Test func listJSONIsTheDaemonsResult() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue", "--virtual-key", "name=Green"])
        let shown = await authctl(["--json", "list"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        let listed = try JSONValueDecoder().decode(AuthenticatorList.self, from: try shown.json())
        #expect(listed.authenticators == (try await daemon.listKeys()))
        #expect(listed.authenticators.map(\.product) == ["Blue", "Green"])
    }

    @Test func infoShowsTheKeyInDetail() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234,capacity=7"])
        let shown = await authctl(["info", "v1"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        let rows = shown.rows
        #expect(shown.lines.first == "ID:                       v1", "the values line up after the longest label: \(shown)")
        #expect(rows["Product"] == "Blue")
        #expect(rows["Transport"] == "virtual")
        #expect(rows["PIN"] == "set, 8 attempts left")
        #expect(rows["Discoverable credentials"] == "7 slots free")
        #expect(rows["Versions"]?.contains("FIDO_2_1") == true, "\(shown)")
        #expect(rows["Options"]?.contains("clientPin=true") == true, "\(shown)")
        #expect(shown.lines.count == 19, "\(shown)")
    }

    @Test func infoJSONIsTheDaemonsResult() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl(["info", "--json", "v1"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        let details = try JSONValueDecoder().decode(AuthenticatorDetails.self, from: try shown.json())
        #expect(details.authenticator.id == "v1")
        #expect(details.authenticator.product == "Blue")
    }

    /// The daemon's error: its message, and the exit code of its kind.
    @Test func infoOnAKeyThatIsNotThereExits69() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl(["info", "v9"], broker: daemon)
        #expect(shown.status == 69, "\(shown)")
        #expect(shown.errors.hasPrefix("authctl: "), "\(shown)")
        #expect(shown.errors.contains("v9"), "\(shown)")
        #expect(shown.output.isEmpty)
    }
}
