import Glibc

/// A plain mutex that may be held across a blocking call.
///
/// `Synchronization.Mutex` wants its closure's result to be `sending`, which
/// fights the non-Sendable handle classes callers return, and it is meant
/// for short critical sections; a pthread mutex has no such opinions.
public final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
