internal import CSystem
import Glibc

/// Opening, reading, writing and closing file descriptors, each result
/// returned or thrown. Interrupted calls are retried; a non-blocking
/// descriptor that has nothing now gives nil, not an error.
public enum FileDescriptor {
    /// Opens `path`; `flags` should include `O_CLOEXEC`, so that a helper the
    /// process starts never inherits the descriptor.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> Int32 {
        try retryingOnInterrupt("open(\(path))") { Glibc.open(path, flags, mode) }
    }

    /// A pipe whose two ends are close-on-exec from the start (`pipe2`).
    public static func pipe() throws(SystemError) -> (reading: Int32, writing: Int32) {
        var ends: [Int32] = [-1, -1]
        try retryingOnInterrupt("pipe2") { ends.withUnsafeMutableBufferPointer { authkeyd_pipe($0.baseAddress, O_CLOEXEC) } }
        return (ends[0], ends[1])
    }

    /// Reads what is there, up to `buffer.count` bytes: how many, 0 at the
    /// end of input, nil when a non-blocking descriptor has nothing yet.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        try retryingOnInterruptUnlessWouldBlock("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes what the descriptor takes now: how many bytes, nil when a
    /// non-blocking descriptor takes none.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        try retryingOnInterruptUnlessWouldBlock("write") { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// A close-on-exec copy of `fd` at the lowest free number (`F_DUPFD_CLOEXEC`).
    public static func duplicate(_ fd: Int32) throws(SystemError) -> Int32 {
        try retryingOnInterrupt("fcntl(F_DUPFD_CLOEXEC)") { fcntl(fd, F_DUPFD_CLOEXEC, 0) }
    }

    /// Closes `fd`, and returns why it failed, if it did, for a caller that
    /// can act on it; there is rarely anything to act on, so no caller has
    /// to look.
    ///
    /// On Linux the descriptor is released whatever `close` returns, EINTR
    /// included: it is never retried (another thread may already have been
    /// given the same number, and a second close would close theirs). EIO
    /// can lose only data written to a file not fsync'd, and every file
    /// whose content matters is written with `AtomicFile`, which fsyncs
    /// first. EBADF is a bug in the caller, and the returned error says so.
    @discardableResult
    public static func close(_ fd: Int32) -> SystemError? {
        Glibc.close(fd) == 0 || errno == EINTR ? nil : SystemError("close")
    }

    /// `fstat`: what the descriptor refers to.
    public static func status(_ fd: Int32) throws(SystemError) -> stat {
        var info = stat()
        try retryingOnInterrupt("fstat") { fstat(fd, &info) }
        return info
    }
}
