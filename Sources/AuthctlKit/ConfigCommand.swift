import AuthClient
import AuthProtocol

/// `authctl config always-uv ID on|off | min-pin-length ID N [--rp RPID]…
/// [--force-change]`: the key's own settings (CTAP authenticatorConfig).
/// Both need the key's PIN when it has one.
struct ConfigCommand: Sendable {
    enum Action: String, Sendable {
        case alwaysUV = "always-uv"
        case minPINLength = "min-pin-length"
    }

    enum Setting: Sendable {
        case alwaysUV(Bool)
        /// The length, the relying parties that may read it, and whether
        /// the key must have a new PIN before it is used again.
        case minPINLength(Int, rpIDs: [String]?, forceChange: Bool)
    }

    static let usage = "config takes: always-uv ID on|off, or min-pin-length ID N [--rp RPID]... [--force-change]"

    let key: ManagedKey
    let setting: Setting

    init(_ arguments: Arguments) throws(UsageError) {
        let (action, key, operands) = try ManagedKey.parse("config", arguments, usage: Self.usage) { (action: Action) in
            switch action {
            case .alwaysUV: (1, [])
            case .minPINLength: (1, ["rp", "force-change"])
            }
        }
        self.key = key
        let value = operands[0]
        switch action {
        case .alwaysUV:
            guard value == "on" || value == "off" else { throw UsageError("config always-uv takes on or off") }
            setting = .alwaysUV(value == "on")
        case .minPINLength:
            let lengths = NewPINRules.floor...NewPINRules.maximumBytes
            guard let length = Int(value), lengths.contains(length) else {
                throw UsageError("config min-pin-length takes a length from \(lengths.lowerBound) to \(lengths.upperBound)")
            }
            setting = .minPINLength(length, rpIDs: arguments.repeated["rp"], forceChange: arguments.flags.contains("force-change"))
        }
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        key.answerPrompts(on: client, console)
        switch setting {
        case .alwaysUV(let enabled):
            let params = AlwaysUvParams(authenticator: key.id, enabled: enabled)
            guard let changed = try await key.call(client, console, ManagementMethod.setAlwaysUv, params, as: AuthenticatorEvent.self) else { return }
            let now = changed.authenticator.alwaysUv
            console.print("Always-UV is \(now ? "on" : "off") for \(key.named(changed.authenticator))"
                + (now ? ": every use needs the PIN or a fingerprint." : "."))
        case .minPINLength(let length, let rpIDs, let forceChange):
            let params = MinPinLengthParams(authenticator: key.id, length: length, rpIds: rpIDs, forceChange: forceChange ? true : nil)
            guard let changed = try await key.call(client, console, ManagementMethod.setMinPinLength, params, as: AuthenticatorEvent.self) else { return }
            var text = "\(key.named(changed.authenticator)) now takes PINs of at least \(length) characters."
            if let rpIDs { text += "\nThese sites may read that minimum: \(rpIDs.map(printable).joined(separator: ", "))." }
            if forceChange { text += "\nThe key asks for a new PIN before it is used again (authctl pin change)." }
            console.print(text)
        }
    }
}
