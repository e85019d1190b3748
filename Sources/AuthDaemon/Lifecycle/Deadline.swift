import Dispatch
import SystemKit

/// Runs `work` and returns whether it finished within `limit`; at the limit
/// it returns false and leaves `work` running, abandoned.
///
/// Abandoned, not cancelled and awaited: what the lifecycle waits for with
/// a limit (a key call that ignores `fido_dev_cancel`, a service that
/// ignores shutdown) may never return, and waiting for it is what the limit
/// is there to avoid. `work` runs as a task of its own preferring
/// `executor` (the broker's queue: Swift's global pool stays unused); the
/// timer is a Dispatch one on `timerQueue`, for the same reason.
func finishes(
    within limit: Duration, timerQueue: DispatchQueue, executor: (any TaskExecutor)?,
    _ work: @escaping @Sendable () async -> Void
) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let pending = Protected<CheckedContinuation<Bool, Never>?>(continuation)
        let answer: @Sendable (Bool) -> Void = { finished in
            pending.withLock { pending in defer { pending = nil }; return pending }?.resume(returning: finished)
        }
        Task(executorPreference: executor) {
            await work()
            answer(true)
        }
        timerQueue.asyncAfter(deadline: .now() + .milliseconds(limit.wholeMilliseconds)) { answer(false) }
    }
}
