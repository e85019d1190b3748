import Glibc

/// Sending and receiving on a connected socket, each result returned or
/// thrown. `MSG_NOSIGNAL` always: a peer that went away is an error (EPIPE)
/// to handle, not a SIGPIPE that ends the process.
extension UnixSocket {
    /// Receives up to `buffer.count` bytes (one message, on a
    /// `SOCK_SEQPACKET` socket): how many, 0 when the peer closed, nil when
    /// `nonBlocking` and nothing is there yet.
    public static func receive(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, nonBlocking: Bool = false
    ) throws(SystemError) -> Int? {
        let flags = nonBlocking ? Int32(MSG_DONTWAIT) : 0
        return try retryingOnInterruptUnlessWouldBlock("recv") { recv(fd, buffer.baseAddress, buffer.count, flags) }
    }

    /// Sends what the socket takes now (all of it, on a `SOCK_SEQPACKET`
    /// socket, or nothing): how many bytes, nil when `nonBlocking` and the
    /// socket's buffer is full.
    public static func send(
        _ fd: Int32, _ bytes: UnsafeRawBufferPointer, nonBlocking: Bool = false
    ) throws(SystemError) -> Int? {
        let flags = Int32(MSG_NOSIGNAL) | (nonBlocking ? Int32(MSG_DONTWAIT) : 0)
        return try retryingOnInterruptUnlessWouldBlock("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, flags) }
    }

    /// Shuts both directions down: the peer reads end-of-file, and a thread
    /// blocked in `accept` or `recv` on `fd` wakes up.
    public static func shutdown(_ fd: Int32) throws(SystemError) {
        try retryingOnInterrupt("shutdown") { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }
}
