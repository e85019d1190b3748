import AuthClient
import AuthProtocol
import SystemKit

/// `authctl agent [--once] [--desktop [--pinentry PROGRAM]]`: the session
/// agent. It answers the security-key prompts of the user's programs that
/// cannot ask themselves (a script, a service, the OpenSSH provider, the
/// PAM module), as pkttyagent and polkit's desktop agents do for polkit:
/// at the terminal it runs on, or (`--desktop`) with the desktop's dialogs.
///
/// Like polkit's agents, it does not keep the daemon running: it registers
/// a callback (`CallbackSocket`), and when the daemon exits for having
/// nothing to do (or stops), the agent waits there until the daemon calls
/// it back, rather than connecting again (which would start the daemon).
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
        let frontEnd = try frontEnd(console)
        let callback = openCallback(frontEnd)
        defer { callback?.close() }
        var connection = client
        var loop = AgentLoop(client: client, frontEnd: frontEnd, once: once, callback: callback?.registration ?? AgentRegisterParams())
        while true {
            let ending: AgentLoop.Ending
            do {
                ending = try await loop.run()
            } catch {
                // A call back that broke off (the daemon stopped as it
                // called): the next call comes the same way.
                guard loop.calledBack else { throw error }
                ending = .daemonGone(callsBack: true, idle: false)
            }
            if connection !== client { connection.close() }
            switch ending {
            case .replaced, .served(succeeded: true):
                return
            case .served(succeeded: false):
                throw Stop("the request it answered for did not succeed", .failure)
            case .daemonGone(callsBack: false, _):
                throw Stop("authkeyd closed the connection; no agent is registered now", .unavailable)
            case .daemonGone(callsBack: true, let idle):
                frontEnd.notice(
                    idle
                        ? "authkeyd exited, having nothing to do; this agent stays registered, and answers when authkeyd calls it back"
                        : "authkeyd stopped; this agent stays registered, and answers when authkeyd, started again, calls it back")
                switch await callback?.nextCall(stranger: { frontEnd.notice($0) }) {
                case nil:
                    return
                case .replaced(let pid)?:
                    frontEnd.replaced(by: pid)
                    return
                case .daemon(let fd)?:
                    connection = AuthClient(connectedDescriptor: fd)
                    loop = AgentLoop(client: connection, frontEnd: frontEnd, once: once, callback: loop.callback, calledBack: true)
                }
            }
        }
    }

    /// The socket the daemon calls back; without one (it could not be
    /// made), the agent keeps the daemon running, as agents did before.
    private func openCallback(_ frontEnd: any AgentFrontEnd) -> CallbackSocket? {
        do {
            return try CallbackSocket.open()
        } catch {
            frontEnd.notice("cannot listen for authkeyd's call back (\(error)): this agent keeps authkeyd running while it is connected")
            return nil
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
