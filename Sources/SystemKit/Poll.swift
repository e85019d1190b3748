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

/// Waits until one of `descriptors` has an event, up to `timeoutMilliseconds`
/// (negative: without limit): how many have one, 0 on timeout. The events
/// are in each one's `revents`.
@discardableResult
public func waitForEvents(_ descriptors: inout [pollfd], timeoutMilliseconds: Int) throws(SystemError) -> Int {
    let count = nfds_t(descriptors.count)
    let ready = try descriptors.withUnsafeMutableBufferPointer { (buffer) throws(SystemError) in
        try retryingOnInterrupt("poll") { poll(buffer.baseAddress, count, Int32(clamping: timeoutMilliseconds)) }
    }
    return Int(ready)
}
