import Glibc

/// Bytes from the kernel's random source, for challenges and user ids
/// nobody gave on the command line.
func randomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { fail("cannot open /dev/urandom: \(String(cString: strerror(errno)))", .failure) }
    defer { close(fd) }
    var filled = 0
    while filled < count {
        let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { fail("cannot read /dev/urandom", .failure) }
        filled += got
    }
    return bytes
}
