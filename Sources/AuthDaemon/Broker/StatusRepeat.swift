import AuthProtocol
import Dispatch

/// The requesters' heartbeat: while a request runs, its requester hears
/// from the daemon at least every `period`, however long the touch, the
/// queue or an agent's prompt takes: its last `operation.status` again
/// (`processing` before the first). So a client that must not hang on a
/// stopped or stuck daemon (the PAM module in sudo, the provider in
/// ssh-sk-helper: `AuthClient.giveUpWhenSilent`) can tell a live daemon
/// from a frozen one by its silence alone. One timer, made when a request
/// starts and kept while requests come (made and cancelled for each, it
/// would cost every request a round trip to libdispatch's timer thread):
/// the first time it finds none running, it goes, so an idle daemon wakes
/// at most once more. Broker-confined state.
struct StatusRepeat {
    var timer: DispatchSourceTimer?
    /// Requests in flight, of every client.
    var running = 0

    /// How often the timer looks; a requester hears from the daemon at
    /// least every two periods (well within `AuthClient.requestSilenceLimit`).
    static let period: Duration = .seconds(5)
}

extension Broker {
    func requestStarted() {
        statusRepeat.running += 1
        guard statusRepeat.timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let period = StatusRepeat.period.wholeMilliseconds
        timer.schedule(deadline: .now() + .milliseconds(period), repeating: .milliseconds(period))
        timer.setEventHandler { [weak self] in
            self?.assumeIsolated { broker in broker.repeatStatuses() }
        }
        timer.resume()
        statusRepeat.timer = timer
    }

    func requestEnded(count: Int = 1) {
        statusRepeat.running = max(0, statusRepeat.running - count)
    }

    /// Each request whose requester has heard nothing for a period hears
    /// its last status again; with none running, the timer goes.
    private func repeatStatuses() {
        guard statusRepeat.running > 0 else {
            statusRepeat.timer?.cancel()
            statusRepeat.timer = nil
            return
        }
        let now = DispatchTime.now()
        let quiet = UInt64(StatusRepeat.period.wholeMilliseconds) * 1_000_000 * 9 / 10
        for session in sessions.all {
            for (id, request) in session.inFlight where !request.isCancelled {
                guard now.uptimeNanoseconds - request.lastStatusSent.uptimeNanoseconds >= quiet else { continue }
                let status = request.lastStatus ?? OperationStatus(request: id.json, status: .processing)
                session.send(.notification(method: Method.operationStatus, params: encode(status)))
                request.lastStatusSent = now
            }
        }
    }
}
