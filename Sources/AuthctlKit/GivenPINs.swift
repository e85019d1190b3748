import AuthProtocol
import SystemKit

/// What this run gave the daemon's PIN prompts, for two things no single
/// prompt knows. The key's PIN, once given, answers the key's next
/// `required` prompt too: one command may make several calls (a listing,
/// then a delete), or one call may need the PIN twice (an enrollment, then
/// naming it), and the user types it once — and a `--pin-fd` holds it once.
/// And the length of the last new PIN, to say why the key refused it.
final class GivenPINs: Sendable {
    private struct State {
        /// The key's PIN, by key id.
        var keyPINs: [String: String] = [:]
        var lastNew: (characters: Int, bytes: Int)?
    }

    private let state = Protected(State())

    /// The PIN that answers this prompt without asking. The daemon asks
    /// `required` only before a first attempt, so a PIN given earlier in
    /// this run has been accepted; a wrong one is asked again as
    /// `invalid`, which forgets it.
    func reusable(for reason: EnterPinPrompt.Reason, key: String) -> String? {
        state.withLock { state in
            if reason == .invalid { state.keyPINs[key] = nil }
            return reason == .required ? state.keyPINs[key] : nil
        }
    }

    func record(_ pin: String, for reason: EnterPinPrompt.Reason, key: String) {
        state.withLock { state in
            switch reason {
            case .required, .invalid: state.keyPINs[key] = pin
            // The current PIN of a change stops being the PIN when it succeeds.
            case .current: break
            case .new, .newRejected:
                state.keyPINs[key] = nil
                state.lastNew = (pin.unicodeScalars.count, pin.utf8.count)
            }
        }
    }

    /// Why the key refused the last new PIN, as far as authctl can tell.
    func whyRefused(_ rules: NewPINRules) -> String {
        let last = state.withLock { $0.lastNew }
        return last.flatMap { rules.problem(characters: $0.characters, bytes: $0.bytes) } ?? "it breaks the key's own rules"
    }
}
