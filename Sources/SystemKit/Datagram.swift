import Glibc

/// Sends one datagram to a Unix socket path; a path starting with `@` is
/// in the abstract namespace (as systemd's `NOTIFY_SOCKET` may be).
public func sendDatagram(_ message: [UInt8], to path: String) throws(SystemError) {
    let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    defer { close(fd) }
    var pathBytes = Array(path.utf8)
    let abstract = pathBytes.first == UInt8(ascii: "@")
    if abstract { pathBytes[0] = 0 }
    guard !pathBytes.isEmpty, pathBytes.count <= UnixSocket.maxPathLength else {
        throw SystemError("datagram socket path \(path)", code: ENAMETOOLONG)
    }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
    // An abstract address is exactly as long as its name; a path ends at its NUL.
    let length = MemoryLayout<sa_family_t>.size + pathBytes.count + (abstract ? 0 : 1)
    let sent = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), $0, socklen_t(length))
        }
    }
    guard sent == message.count else { throw SystemError("sendto(\(path))") }
}
