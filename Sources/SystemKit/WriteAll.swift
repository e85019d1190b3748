import Glibc

/// Writes all of `bytes` to `fd` (a file, a pipe, a terminal), however many
/// `write` calls it takes, retrying on EINTR.
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
    try transferAll(bytes, "write") { Glibc.write(fd, $0, $1) }
}

/// Sends all of `bytes` on the stream socket `fd`, however many `send` calls
/// it takes, retrying on EINTR. A peer that has gone is an error (EPIPE),
/// not a SIGPIPE.
public func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
    try transferAll(bytes, "send") { Glibc.send(fd, $0, $1, Int32(MSG_NOSIGNAL)) }
}

/// The one loop behind both: a short write moves on, a write of nothing
/// (the other end is gone) fails instead of spinning.
private func transferAll(_ bytes: [UInt8], _ call: String, _ transfer: (UnsafeRawPointer, Int) -> Int) throws(SystemError) {
    var offset = 0
    while offset < bytes.count {
        let done = try retryingOnInterrupt(call) { bytes.withUnsafeBytes { transfer($0.baseAddress! + offset, $0.count - offset) } }
        guard done > 0 else { throw SystemError(call, code: EPIPE) }
        offset += done
    }
}
