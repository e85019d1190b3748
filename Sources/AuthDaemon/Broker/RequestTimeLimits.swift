import AuthProtocol
import Dispatch

/// The time limits of the requests in flight, kept by one Dispatch timer.
///
/// A `queue.asyncAfter` per request handed every request to libdispatch's
/// manager thread to program its timer (perf on bench row 1: about a tenth
/// of the daemon's CPU time per assertion, and one more thread woken), and
/// left the timer behind for the whole limit. Requests nearly all get the
/// configured limit, so a new one nearly always ends after those already
/// running: the one timer is armed for the earliest deadline, and is moved
/// only when a request ends before it. Broker-confined state.
struct RequestTimeLimits {
    var timer: DispatchSourceTimer?
    /// When the timer fires next; nil when it is not armed.
    var armedFor: DispatchTime?
}

extension Broker {
    /// Cancels `request` with `timeout` if it still runs after `limit`.
    func limitTime(of request: InFlightRequest, to limit: Duration) {
        let deadline = DispatchTime.now() + .milliseconds(limit.wholeMilliseconds)
        request.timeLimit = (deadline, limit)
        if let armed = timeLimits.armedFor, armed <= deadline { return }
        armTimeLimitTimer(for: deadline)
    }

    private func armTimeLimitTimer(for deadline: DispatchTime) {
        let timer: DispatchSourceTimer
        if let existing = timeLimits.timer {
            timer = existing
        } else {
            timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in
                self?.assumeIsolated { broker in broker.timeLimitTimerFired() }
            }
            timer.resume()
            timeLimits.timer = timer
        }
        timer.schedule(deadline: deadline)
        timeLimits.armedFor = deadline
    }

    /// Cancels the requests past their limit, and arms the timer for the
    /// next limit of those still running (none: it stays unarmed).
    private func timeLimitTimerFired() {
        timeLimits.armedFor = nil
        let now = DispatchTime.now()
        var next: DispatchTime?
        for request in sessions.requestsInFlight where !request.isCancelled {
            guard !request.expireIfPastTimeLimit(now: now), let limit = request.timeLimit else { continue }
            if next.map({ limit.deadline < $0 }) ?? true { next = limit.deadline }
        }
        if let next { armTimeLimitTimer(for: next) }
    }

    /// Shutdown: the timer goes, with whatever it still waits for.
    func stopTimeLimits() {
        timeLimits.timer?.cancel()
        timeLimits = RequestTimeLimits()
    }
}
