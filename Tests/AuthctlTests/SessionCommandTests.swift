import AuthProtocol
import BrokerTestSupport
import Testing

/// The commands that hold a session open: select, watch, and the agent
/// where it has nowhere to ask.
@Suite(.timeLimit(.minutes(2))) struct SessionCommandTests {
    @Test func selectPrintsTheKeyTouched() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let shown = await authctl(["select", "--timeout", "10"], broker: daemon)
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.output == "v1  Blue (virtual)\n")
        #expect(shown.errors.hasPrefix("Touch the security key you want to use…\n"), "\(shown)")

        let json = await authctl(["select", "--json"], broker: daemon)
        #expect(json.status == 0, "\(json)")
        #expect(try JSONValueDecoder().decode(AuthenticatorEvent.self, from: try json.json()).authenticator.id == "v1")
        #expect(!json.errors.contains("Touch the security key you want to use…"), "--json says nothing to people: \(json)")
    }

    /// watch reports the keys present, then runs until the daemon goes:
    /// exit 69, as for a daemon that is not there.
    @Test func watchRunsUntilTheDaemonGoes() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let output = CapturedOutput()
        async let watched = authctl(["watch"], broker: daemon, output: output)
        for _ in 0..<200 where !output.output.contains("present") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(output.output == "Watching for security keys; Ctrl-C stops.\npresent  v1  Blue (virtual)\n")
        await daemon.stop()
        let shown = await watched
        #expect(shown.status == 69, "\(shown)")
        #expect(shown.errors.hasPrefix("authctl: "), "\(shown)")
    }

    /// The agent asks at a terminal or on the desktop; with neither it
    /// cannot serve, and says so (exit 69).
    @Test func theAgentNeedsATerminalOrADisplay() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"])
        let terminal = await authctl(["agent"], broker: daemon)
        #expect(terminal.status == 69, "\(terminal)")
        #expect(terminal.errors
            == "authctl: agent asks its questions at a terminal, and has none: run it in one, or use --desktop in a graphical session\n")

        let desktop = await authctl(["agent", "--desktop", "--once"], broker: daemon, environment: ["DISPLAY": ""])
        #expect(desktop.status == 69, "\(desktop)")
        #expect(desktop.errors
            == "authctl: agent --desktop: no display (DISPLAY and WAYLAND_DISPLAY are unset) and no terminal to ask at instead\n")
    }
}
