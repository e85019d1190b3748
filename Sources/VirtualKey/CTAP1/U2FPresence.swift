import SystemKit

/// User presence the U2F way. A U2F key never blocks: it answers REGISTER
/// or AUTHENTICATE at once with "conditions not satisfied" (0x6985) until
/// the user has touched it, and the host asks again (libfido2 every
/// 100 ms). The simulated user's presence setting decides when that touch
/// comes, counted from the first of a run of such polls.
final class U2FPresence: Sendable {
    private struct Wait {
        var started: ContinuousClock.Instant
        var lastPoll: ContinuousClock.Instant
        var pressesBefore: UInt64
    }

    private let wait = Protected<Wait?>(nil)
    private let user: SimulatedUser
    /// Polls further apart than this are a new request for a touch, not the
    /// same one asked again: the host gave up on the last one.
    static let abandonedAfter: Duration = .seconds(2)

    init(user: SimulatedUser) {
        self.user = user
    }

    /// Whether the user has touched the key for the request polling now; a
    /// touch, once reported, is used up.
    func consumeTouch() -> Bool {
        let now = ContinuousClock.now
        let presses = user.pressCount
        return wait.withLock { wait in
            var current = Wait(started: now, lastPoll: now, pressesBefore: presses)
            if let previous = wait, now - previous.lastPoll <= Self.abandonedAfter {
                current = previous
                current.lastPoll = now
            }
            let touched: Bool
            switch user.presence {
            case .immediate: touched = true
            case .after(let delay): touched = now - current.started >= delay
            case .manual: touched = presses > current.pressesBefore
            // U2F has no way to refuse, and no timeout of its own: the key
            // keeps answering "not yet" until the host stops asking.
            case .never, .denied: touched = false
            }
            wait = touched ? nil : current
            return touched
        }
    }
}
