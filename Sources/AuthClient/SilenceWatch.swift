import Dispatch
import SystemKit

extension AuthClient {
    /// How often the daemon speaks to a requester while a request of its
    /// runs (a status at least every few seconds, however long the touch
    /// takes: authkeyd-protocol(7), "operation.status"). A daemon silent
    /// for three times that is stopped or stuck.
    public static let requestSilenceLimit: Duration = .seconds(15)
    /// `hello` is answered at once by a live daemon.
    public static let helloSilenceLimit: Duration = .seconds(2)

    /// From now on, gives up on the daemon (closes the connection, so that
    /// every call fails `notAnswering`) when it owes an answer and says
    /// nothing for `limit`; nil stops watching. Only calls in flight
    /// count: an idle connection is not a silent daemon; nor is the time
    /// spent answering the daemon's own prompts (it waits for us then).
    /// For code that must never hang its host on a frozen daemon: the PAM
    /// module inside sudo, the provider inside ssh-sk-helper.
    public func giveUpWhenSilent(for limit: Duration?) {
        silence.watch(limit: limit) { [weak self] in
            guard let self else { return (owed: false, giveUp: {}) }
            return (self.isOwedAnAnswer, { self.close() })
        }
    }
}

/// When the daemon last spoke to this client, the limit of its silence,
/// and the timer that checks it.
final class SilenceWatch: @unchecked Sendable {
    private struct State {
        var lastHeard = DispatchTime.now()
        var answering = 0
        var limit: Duration?
        var gaveUp: Duration?
    }
    private let state = Protected(State())
    /// Touched only with `timerLock` held.
    private var timer: (any DispatchSourceTimer)?
    private let timerLock = Lock()
    /// The timers' queue (not a global one: see SystemKit's `QueueExecutor`).
    private static let timers = DispatchQueue(label: "authclient.silence")
    /// How often the limit is checked.
    private static let period: Duration = .milliseconds(250)

    /// The daemon spoke, or a call starts (the wait for its answer starts now).
    func heard() { state.withLock { $0.lastHeard = .now() } }

    func answering(_ started: Bool) {
        state.withLock { state in
            state.answering += started ? 1 : -1
            state.lastHeard = .now()
        }
    }

    /// The limit the client gave up at, if it did.
    var gaveUp: Duration? { state.withLock { $0.gaveUp } }

    /// Watches with `limit` from now on (nil: stops). `client` says
    /// whether an answer is owed, and how to give up.
    func watch(limit: Duration?, client: @escaping @Sendable () -> (owed: Bool, giveUp: @Sendable () -> Void)) {
        state.withLock { state in
            state.limit = limit
            state.lastHeard = .now()
        }
        guard limit != nil else { return stop() }
        timerLock.withLock {
            guard timer == nil else { return }
            let made = DispatchSource.makeTimerSource(queue: Self.timers)
            let period = Self.period.wholeMilliseconds
            made.schedule(deadline: .now() + .milliseconds(period), repeating: .milliseconds(period))
            made.setEventHandler { [self] in check(client) }
            made.resume()
            timer = made
        }
    }

    private func check(_ client: @Sendable () -> (owed: Bool, giveUp: @Sendable () -> Void)) {
        let (owed, giveUp) = client()
        let silent = state.withLock { state -> Bool in
            guard owed, state.answering == 0, state.gaveUp == nil, let limit = state.limit else {
                // Nothing owed: the wait for the next answer starts with its call.
                if !owed { state.lastHeard = .now() }
                return false
            }
            let waited = DispatchTime.now().uptimeNanoseconds - state.lastHeard.uptimeNanoseconds
            guard waited >= UInt64(limit.wholeMilliseconds) * 1_000_000 else { return false }
            state.gaveUp = limit
            return true
        }
        if silent { giveUp() }
    }

    /// The connection closed: the timer goes.
    func stop() {
        timerLock.withLock {
            timer?.cancel()
            timer = nil
        }
    }
}
