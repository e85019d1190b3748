import AuthProtocol
import SystemKit

extension Broker {
    /// A reloaded configuration: the policy, limits and timeouts apply to
    /// what comes next; connected clients keep the rights they were given.
    func reconfigure(_ fresh: DaemonConfiguration) {
        configuration = fresh
        policy = AccessPolicy(allowUsers: fresh.allowUsers, allowAdmins: fresh.allowAdmins)
        for name in policy.unresolved {
            logger.warning("allow-users/allow-admins: no user or group \"\(name)\"; ignored")
        }
    }

    /// Shutdown: every operation is cancelled and answered `shuttingDown`,
    /// every client is told, and the keys are closed.
    func shutDown() async {
        isShuttingDown = true
        let reason = RPCError(.shuttingDown, "authkeyd is shutting down")
        for session in sessions.values {
            for request in session.inFlight.values { request.cancel(reason) }
        }
        // The cancelled requests answer as their keys let go; give them a moment.
        let deadline = ContinuousClock.now + .seconds(3)
        while sessions.values.contains(where: { !$0.inFlight.isEmpty }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let notice = RPCMessage.notification(method: Method.shuttingDown, params: ["reason": "shuttingDown"]).line()
        for session in sessions.values {
            session.send(line: notice)
            session.connection.closeAfterFlush()
        }
        for key in orderedKeys { key.worker.stop() }
        // Let the key threads close their keys and end before the process
        // does: a thread still ending at exit leaves what it held (libfido2's
        // handle, OpenSSL's per-thread state) half freed.
        let workers = orderedKeys.map(\.worker)
        let stopDeadline = ContinuousClock.now + .seconds(1)
        while workers.contains(where: { !$0.hasEnded }) && ContinuousClock.now < stopDeadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        store?.flush()
    }
}
