import Dispatch
import SystemKit

/// The person in front of the virtual key: touches it (or not), and puts a
/// finger on its sensor. The behaviour can change while the key runs.
final class SimulatedUser: Sendable {
    enum Presence: Equatable {
        case present
        case denied
        case timedOut
        case cancelled
    }

    private struct State {
        var presence: PresenceBehaviour
        var verification: UserVerificationBehaviour
        var presses: UInt64 = 0
        var waiting: CommandContext?
    }

    private let state: Protected<State>
    private let timeout: Duration

    init(presence: PresenceBehaviour, verification: UserVerificationBehaviour, timeout: Duration) {
        state = Protected(State(presence: presence, verification: verification))
        self.timeout = timeout
    }

    var presence: PresenceBehaviour {
        get { state.withLock { $0.presence } }
        set { state.withLock { $0.presence = newValue } }
    }

    var verification: UserVerificationBehaviour {
        get { state.withLock { $0.verification } }
        set { state.withLock { $0.verification = newValue } }
    }

    /// How often the button has been pressed: a U2F key, which polls
    /// rather than waits, counts the presses since a request began.
    var pressCount: UInt64 { state.withLock { $0.presses } }

    /// The button is pressed (for `.manual`).
    func touch() {
        state.withLock { state in
            state.presses += 1
            state.waiting?.wake()
        }
    }

    /// Waits for a touch as the behaviour says, sending "user presence
    /// needed" keepalives every 100 ms, until touched, refused, timed out or
    /// cancelled by the host.
    func awaitPresence(_ context: CommandContext) -> Presence {
        let (behaviour, pressesBefore) = state.withLock { state in
            state.waiting = context
            return (state.presence, state.presses)
        }
        defer { state.withLock { $0.waiting = nil } }

        let clock = ContinuousClock()
        let start = clock.now
        let touchAt: ContinuousClock.Instant?
        switch behaviour {
        case .immediate: return context.isCancelled ? .cancelled : .present
        case .denied: return .denied
        case .after(let delay): touchAt = start + delay
        case .never, .manual: touchAt = nil
        }
        let deadline = start + timeout
        while true {
            if context.isCancelled { return .cancelled }
            let now = clock.now
            if let touchAt, now >= touchAt { return .present }
            if behaviour == .manual, state.withLock({ $0.presses }) > pressesBefore { return .present }
            if now >= deadline { return .timedOut }
            context.keepalive(.userPresenceNeeded)
            var next = min(deadline, now + .milliseconds(CTAPHIDTransport.keepaliveInterval))
            if let touchAt { next = min(next, touchAt) }
            context.pause(milliseconds: max(1, (next - now).wholeMilliseconds))
        }
    }

    /// A finger on the sensor: needs presence first, then matches as the
    /// behaviour says.
    func awaitFingerprint(_ context: CommandContext) -> (Presence, matched: Bool) {
        let presence = awaitPresence(context)
        guard presence == .present else { return (presence, false) }
        return (.present, verification == .match)
    }
}
