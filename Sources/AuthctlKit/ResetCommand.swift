import AuthClient
import AuthProtocol

/// `authctl reset ID [--yes-really]`: erases every credential on the key,
/// its PIN and its fingerprints. The daemon wants the key's product name
/// as confirmation: at a terminal the user types it; `--yes-really` gives
/// it for a script; with neither, nothing is erased.
struct ResetCommand: Sendable {
    let key: ManagedKey
    let yesReally: Bool

    init(_ arguments: Arguments) throws(UsageError) {
        try arguments.check("reset", takes: ManagedKey.options.union(["yes-really"]))
        guard arguments.operands.count == 1 else { throw UsageError("reset takes a key ID (see authctl list)") }
        key = try ManagedKey(arguments.operands[0], arguments)
        yesReally = arguments.flags.contains("yes-really")
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        let terminal = console.terminal()
        guard yesReally || terminal != nil else {
            throw Stop("reset erases every credential on the key: confirm it at a terminal, or give --yes-really", .cancelled)
        }
        let target = try await client.authenticatorInfo(key.id).authenticator
        let confirmation = yesReally ? target.product : try Self.confirm(target, named: key.named(target), at: terminal)
        key.answerPrompts(on: client, console, cues: StatusCues { status in
            status.status == .waitingForTouch ? "Touch the key to confirm the reset…" : StatusCues.cue(for: status)
        })
        let params = ResetParams(authenticator: key.id, confirm: confirmation)
        guard let reset = try await key.call(client, console, ManagementMethod.reset, params, as: AuthenticatorEvent.self) else { return }
        console.print("Reset \(key.named(reset.authenticator)): no credentials, no PIN, no fingerprints.")
    }

    /// Warns, and asks for the product name; anything else cancels.
    private static func confirm(_ target: Authenticator, named name: String, at terminal: Terminal?) throws(Stop) -> String {
        let product = printable(target.product)
        terminal?.say(
            "Resetting \(name) erases every credential on it, its PIN and its fingerprints.\n"
                + "Sites that know it as a security key will no longer accept it. This cannot be undone.\n")
        guard let typed = terminal?.ask("Type the key's product name, \(product), to reset it: ")?.trimmed,
            typed == target.product
        else { throw Stop("not reset: the product name was not typed", .cancelled) }
        return typed
    }
}
