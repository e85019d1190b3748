import Glibc

/// Blocks the calling thread, for tests that must let real time pass
/// (a reset window, a message timeout) on a thread that is not async.
public func blockingSleep(_ duration: Duration) {
    var remaining = timespec(
        tv_sec: Int(duration.components.seconds), tv_nsec: Int(duration.components.attoseconds / 1_000_000_000))
    var left = timespec()
    while nanosleep(&remaining, &left) != 0 { remaining = left }
}
