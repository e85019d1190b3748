import Glibc

extension FileDescriptor {
    /// Writes all of `bytes` to `fd` (a file, a pipe, a terminal), however
    /// many `write` calls it takes (a blocking descriptor: on one that would
    /// block, this fails with EAGAIN).
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        try transferAll(bytes, "write") { chunk throws(SystemError) in try write(fd, chunk) }
    }
}

extension UnixSocket {
    /// Sends all of `bytes` on the stream socket `fd`, however many `send`
    /// calls it takes. A peer that has gone is an error (EPIPE), not a SIGPIPE.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        try transferAll(bytes, "send") { chunk throws(SystemError) in try send(fd, chunk) }
    }
}

/// The one loop behind both: a short transfer moves on from where it
/// stopped; one that would block, or that moves nothing (the other end is
/// gone), fails instead of spinning.
private func transferAll(
    _ bytes: [UInt8], _ call: String, _ transfer: (UnsafeRawBufferPointer) throws(SystemError) -> Int?
) throws(SystemError) {
    var offset = 0
    while offset < bytes.count {
        // `withUnsafeBytes` rethrows untyped errors: the result carries the typed one out.
        let result = bytes.withUnsafeBytes { all in
            Result { () throws(SystemError) in try transfer(UnsafeRawBufferPointer(rebasing: all[offset...])) }
        }
        guard let done = try result.get() else { throw SystemError(call, code: EAGAIN) }
        guard done > 0 else { throw SystemError(call, code: EPIPE) }
        offset += done
    }
}
