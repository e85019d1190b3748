import Glibc

/// Stream sockets in Linux's abstract namespace (`@name` in ss(8)): no
/// file, no permissions, gone as soon as the listening descriptor is
/// closed, and reachable by every process of the same network namespace.
/// Close-on-exec, as every socket of `UnixSocket`.
extension UnixSocket {
    /// Listens on `name`; EADDRINUSE when a socket has it already.
    public static func listen(abstractName name: String, backlog: Int32 = 16) throws(SystemError) -> Int32 {
        let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            try withAddress(name, abstract: true) { (address, length) throws(SystemError) in
                try retryingOnInterrupt("bind(@\(name))") { bind(fd, address, length) }
            }
            try retryingOnInterrupt("listen(@\(name))") { Glibc.listen(fd, backlog) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// Connects to `name`. Non-blocking, it never waits: a Unix socket
    /// connects at once or not at all, so the call fails with EAGAIN when
    /// the listener's backlog is full, and with ECONNREFUSED when nothing
    /// listens; the descriptor stays non-blocking.
    public static func connect(abstractName name: String, nonBlocking: Bool) throws(SystemError) -> Int32 {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, flags, 0) }
        do {
            try withAddress(name, abstract: true) { (address, length) throws(SystemError) in
                try retryingOnInterrupt("connect(@\(name))") { Glibc.connect(fd, address, length) }
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return fd
    }
}
