import Dispatch

/// A serial executor over a Dispatch queue, so that an actor and the
/// Dispatch sources that feed it (sockets, signals, inotify) share one
/// thread of control: a source's handler runs on the queue and may enter
/// the actor synchronously with `assumeIsolated`, without a task hop.
///
/// It is also a task executor: a task started with it as its preference
/// (`Task(executorPreference:)`) runs its nonisolated async code on the
/// same queue instead of Swift's global pool. Besides saving two thread
/// hand-offs per awaited call, that keeps the pool unused, and on Linux
/// the pool's first job starts libdispatch's workqueue monitor, a 1 Hz
/// timer that then wakes an idle process forever.
public final class QueueExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    public let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// An executor over a queue that already exists: `.main` runs a
    /// command-line tool's tasks on its main thread, which `dispatchMain`
    /// (Swift's async top level) services, so that a one-request program
    /// starts no thread pool at all.
    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor())
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
