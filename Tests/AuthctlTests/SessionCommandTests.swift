import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
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

    /// The agent takes the prompts of a requester that answers none: at a
    /// terminal where every question reads as Ctrl-D (/dev/null) it declines
    /// the PIN, and with `--once` it ends with that request: exit 1.
    @Test func theAgentServesOneHeadlessRequest() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue,pin=1234"])
        async let served = authctl(["agent", "--once"], broker: daemon, terminal: "/dev/null")
        // Until the agent has registered, the daemon refuses at once: no one to ask for the PIN.
        var reason: ErrorReason? = .pinRequired
        for _ in 0..<250 where reason == .pinRequired {
            let requester = try daemon.client()
            _ = try await requester.hello(client: "headless/1", answering: [])
            do {
                _ = try await requester.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
                reason = nil
            } catch {
                reason = error.reason
                if reason == .pinRequired { try await Task.sleep(for: .milliseconds(20)) }
            }
        }
        #expect(reason == .cancelled, "the agent's terminal gave no PIN")
        let shown = await served
        #expect(shown.status == 1, "\(shown)")
        #expect(shown.errors == "authctl: the request it answered for did not succeed\n")
        #expect(shown.output.isEmpty, "the agent speaks at its terminal")
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
