import AuthProtocol
import FIDO2
import SystemKit

extension Broker {
    /// A reloaded configuration and the policy resolved from it (off the
    /// broker's queue): the policy, limits and timeouts apply to what comes
    /// next; connected clients keep the rights they were given.
    func reconfigure(_ fresh: DaemonConfiguration, policy: AccessPolicy) {
        configuration = fresh
        self.policy = policy
    }

    /// How long the cancelled operations have to answer before the
    /// clients are told and the keys closed regardless.
    static let operationsShutdownWait = ShutdownDeadline.operations
    /// How long the keys' threads have to close their keys.
    static let keysShutdownWait = ShutdownDeadline.keys

    /// Shutdown: every operation is cancelled and answered `shuttingDown`,
    /// every client is told, and the keys are closed.
    /// Once: a second call (a test's broker stopped, then released) returns.
    func shutDown() async {
        guard !isShuttingDown else { return }
        isShuttingDown = true
        endIdleWait()
        endWakes()
        stopTimeLimits()
        statusRepeat.timer?.cancel()
        statusRepeat.timer = nil
        let reason = RPCError(.shuttingDown, "authkeyd is shutting down")
        for request in sessions.requestsInFlight { request.cancel(reason) }
        // The cancelled requests answer as their keys let go: each
        // request's task ends once its answer is sent.
        let answering = sessions.requestsInFlight.compactMap(\.task)
        if !(await finishes(within: Self.operationsShutdownWait, timerQueue: queue, executor: executor) {
            for task in answering { await task.value }
        }) {
            logger.info("operations still running after \(Self.operationsShutdownWait); closing regardless")
        }
        let notice = RPCMessage.notification(method: Method.shuttingDown, params: encode(ShuttingDown(idle: idle.exiting ? true : nil))).line()
        for session in sessions.all {
            session.send(line: notice)
            session.connection.closeAfterFlush()
        }
        await closeKeys()
        // Before exit: the sign counts and last uses not yet written, and
        // any write still queued on the store's thread.
        await store?.flush()
        await callbacks?.flush()
    }

    /// Closes every key on its own thread, then ends the threads: a thread
    /// still closing at exit leaves what it held (libfido2's handle,
    /// OpenSSL's per-thread state) half freed. The close is a job of the
    /// thread's, queued after what it still had to do, and awaited; `stop`
    /// then finds the key closed.
    private func closeKeys() async {
        // Keys still coming up (waiting for another program, say) stop.
        keys.comingUp.values.forEach { $0.stop() }
        keys.comingUp = [:]
        let workers = orderedKeys.map(\.worker)
        workers.forEach { $0.cancel() }
        _ = await finishes(within: Self.keysShutdownWait, timerQueue: queue, executor: executor) {
            await withTaskGroup(of: Void.self) { group in
                for worker in workers {
                    group.addTask { await worker.close() }
                }
            }
        }
        workers.forEach { $0.stop() }
    }
}
