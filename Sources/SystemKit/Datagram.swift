import Glibc

/// Sends one datagram to a Unix socket path; a path starting with `@` is
/// in the abstract namespace (as systemd's `NOTIFY_SOCKET` may be).
public func sendDatagram(_ message: [UInt8], to path: String) throws(SystemError) {
    let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    defer { close(fd) }
    let send = { (address: UnsafePointer<sockaddr>, length: socklen_t) throws(SystemError) in
        let sent = sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), address, length)
        guard sent == message.count else { throw SystemError("sendto(\(path))") }
    }
    if path.hasPrefix("@") {
        try UnixSocket.withAddress(String(path.dropFirst()), abstract: true, send)
    } else {
        try UnixSocket.withAddress(path, send)
    }
}
