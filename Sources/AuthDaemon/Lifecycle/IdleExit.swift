import Dispatch

/// `exit-idle`: under socket activation, the daemon exits once it has had
/// nothing to do for a while, as pcscd's `--auto-exit` does, so that a key
/// used a few times a day costs no resident daemon in between. systemd
/// keeps the listening socket and starts the daemon again on the next
/// connection; nothing is lost (registrations, key names and virtual keys'
/// state are on disk, written as they change).
///
/// Nothing to do: no client connected (so no watcher, prompt or request)
/// but agents the daemon can call back, with nothing outstanding, and no
/// key busy (a call a client left behind is still being cancelled). Such
/// an agent is told the daemon exits (`daemon.shuttingDown` with `idle`)
/// and waits; the daemon started again calls it back when a prompt or a
/// status of its user's needs it (`wakeAgent`), as polkit calls its
/// agents. The wait is a timer armed when the broker becomes idle,
/// not polling; the service returns when it fires with the broker still
/// idle, which starts the group's graceful shutdown (STOPPING=1, exit 0),
/// or when the daemon shuts down for another reason.
public struct IdleExit: Service {
    let broker: Broker
    let after: Duration

    public init(broker: Broker, after: Duration) {
        self.broker = broker
        self.after = after
    }

    public func run() async {
        await broker.waitUntilIdle(for: after)
    }
}

/// The broker's side of `exit-idle`: broker-confined state.
struct IdleTracking {
    var after: Duration?
    var waiter: CheckedContinuation<Void, Never>?
    /// Bumped whenever the broker is busy again: a timer armed before does nothing.
    var generation = 0
    /// The timer fired: the daemon exits because it had nothing to do.
    var exiting = false
}

extension Broker {
    /// Nothing to do: no client but dormant agents, none being called
    /// back, no key in use.
    var isIdle: Bool { !keys.anyInUse && wakes.isEmpty && sessions.all.allSatisfy(isDormantAgent) }

    /// An agent the daemon can call back, asked nothing now and asking
    /// nothing: its connection need not keep the daemon running. (One it
    /// cannot call back, an agent of before callbacks, keeps it running
    /// as any client does.)
    func isDormantAgent(_ session: Session) -> Bool {
        session.callsBack && agents.agent(ofUser: session.peer.uid) === session && session.inFlight.isEmpty
            && session.prompts.pending == 0 && !session.watching
    }

    /// Returns once the broker has been idle for `duration` on end, or
    /// when it shuts down.
    func waitUntilIdle(for duration: Duration) async {
        guard !isShuttingDown else { return }
        await withCheckedContinuation { continuation in
            idle.after = duration
            idle.waiter = continuation
            armIdleTimer()
        }
    }

    /// Something started (a client connected): an armed timer is void.
    func noteBusy() {
        idle.generation += 1
    }

    /// Something ended: if nothing is left, the idle time starts now.
    func armIdleTimer() {
        guard let after = idle.after, idle.waiter != nil, isIdle else { return }
        idle.generation += 1
        let generation = idle.generation
        queue.asyncAfter(deadline: .now() + .milliseconds(after.wholeMilliseconds)) { [weak self] in
            self?.assumeIsolated { broker in broker.idleTimerFired(generation) }
        }
    }

    private func idleTimerFired(_ generation: Int) {
        guard generation == idle.generation, isIdle, let waiter = idle.waiter, let after = idle.after else { return }
        idle.waiter = nil
        idle.exiting = true
        logger.info("nothing to do for \(after) (exit-idle): exiting; systemd starts authkeyd again on the next connection")
        waiter.resume()
    }

    /// The daemon stops for another reason: the idle wait ends too.
    func endIdleWait() {
        idle.waiter?.resume()
        idle.waiter = nil
    }
}
