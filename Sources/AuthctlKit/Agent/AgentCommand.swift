import AuthClient
import AuthProtocol
import SystemKit

/// `authctl agent [--once] [--desktop [--pinentry PROGRAM]]`: the session
/// agent. It answers the security-key prompts of the user's programs that
/// cannot ask themselves (a script, a service, the OpenSSH provider, the
/// PAM module), as pkttyagent and polkit's desktop agents do for polkit:
/// at the terminal it runs on, or (`--desktop`) with the desktop's dialogs.
struct AgentCommand: Sendable {
    static let options: Set<String> = ["once", "desktop", "pinentry"]
    let once: Bool
    let desktop: Bool
    let pinentry: String

    init(_ arguments: Arguments) throws(UsageError) {
        try arguments.check("agent", takes: Self.options)
        guard arguments.operands.isEmpty else { throw UsageError("agent takes no operands") }
        once = arguments.flags.contains("once")
        desktop = arguments.flags.contains("desktop")
        let program = try arguments.single("pinentry")
        guard program == nil || desktop else { throw UsageError("--pinentry goes with --desktop") }
        // Debian's `pinentry` alternative: the pinentry the user chose for GnuPG.
        pinentry = program ?? "pinentry"
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        let ending = try await AgentLoop(client: client, frontEnd: frontEnd(console), once: once).run()
        switch ending {
        case .replaced, .served(succeeded: true):
            return
        case .served(succeeded: false):
            throw Stop("the request it answered for did not succeed", .failure)
        case .daemonGone:
            throw Stop("authkeyd closed the connection; no agent is registered now", .unavailable)
        }
    }

    /// The desktop's dialogs where a display is set; the terminal otherwise,
    /// as pinentry falls back to curses.
    private func frontEnd(_ console: Console) throws(Stop) -> any AgentFrontEnd {
        let display = ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(console.environment[$0] ?? "").isEmpty }
        if desktop && display { return DesktopAgent(pinentry: pinentry, log: console.output) }
        guard let terminal = console.terminal() else {
            if desktop {
                throw Stop("agent --desktop: no display (DISPLAY and WAYLAND_DISPLAY are unset) and no terminal to ask at instead", .unavailable)
            }
            throw Stop("agent asks its questions at a terminal, and has none: run it in one, or use --desktop in a graphical session", .unavailable)
        }
        if desktop {
            terminal.announce("authctl agent: no display (DISPLAY and WAYLAND_DISPLAY are unset): asking at this terminal instead.\n")
        }
        return TerminalAgent(terminal: terminal)
    }
}
