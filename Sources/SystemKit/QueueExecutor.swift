import Dispatch

/// A serial executor over a Dispatch queue, so that an actor and the
/// Dispatch sources that feed it (sockets, signals, inotify) share one
/// thread of control: a source's handler runs on the queue and may enter
/// the actor synchronously with `assumeIsolated`, without a task hop.
public final class QueueExecutor: SerialExecutor, @unchecked Sendable {
    public let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
