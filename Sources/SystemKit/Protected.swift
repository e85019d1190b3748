import Glibc

/// A value shared between threads, reached only under its lock: the same
/// use as `Synchronization.Mutex`, on a pthread mutex.
///
/// Why not `Mutex`: on Linux it locks with futex calls of its own, which
/// ThreadSanitizer does not see, so under `swift test --sanitize=thread`
/// every value it guards is reported as a data race, real races drowned
/// among them. ThreadSanitizer intercepts pthread mutexes, and uncontended
/// they cost the same.
public final class Protected<Value: Sendable>: @unchecked Sendable {
    // Only touched inside `withLock`.
    private var value: Value
    private let lock = Lock()

    public init(_ value: Value) {
        self.value = value
    }

    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try lock.withLock { () throws(E) -> R in try body(&value) }
    }
}
