extension Broker {
    /// Starts a task that runs on the daemon's queue, its nonisolated
    /// async calls included (see `QueueExecutor`). Every task the daemon
    /// starts goes through here, so that Swift's global pool stays unused.
    nonisolated func startTask(_ body: @escaping @Sendable () async -> Void) {
        Task(executorPreference: executor) { await body() }
    }
}
