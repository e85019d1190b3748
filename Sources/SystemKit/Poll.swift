import Glibc

/// Waits until `fd` is readable (or hung up), up to `timeoutMilliseconds`
/// (negative: without limit). Returns false on timeout.
public func waitUntilReadable(_ fd: Int32, timeoutMilliseconds: Int) throws(SystemError) -> Bool {
    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let ready = try retryingOnInterrupt("poll") { poll(&descriptor, 1, Int32(clamping: timeoutMilliseconds)) }
    return ready > 0
}

/// Sets or clears `O_NONBLOCK`.
public func setNonBlocking(_ fd: Int32, _ enabled: Bool = true) throws(SystemError) {
    let flags = try retryingOnInterrupt("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
    let wanted = enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    if wanted != flags { try retryingOnInterrupt("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, wanted) } }
}

/// `POLLRDHUP`: the peer shut down its writing side. Linux ABI (0x2000);
/// Swift's Glibc module is built without `_GNU_SOURCE` and does not see it.
public let pollReadHangUp = Int16(0x2000)
