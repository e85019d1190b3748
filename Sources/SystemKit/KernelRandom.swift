internal import CSystem
import Glibc

/// `count` bytes from the kernel's random source (`getrandom(2)`): for
/// programs that need random bytes but no digest library (authctl's
/// challenges), and that may run where /dev is not mounted.
public func kernelRandomBytes(_ count: Int) throws(SystemError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        // A request over 256 bytes may be cut short: ask again for the rest.
        filled += try retryingOnInterrupt("getrandom") {
            bytes.withUnsafeMutableBytes { authkeyd_getrandom($0.baseAddress! + filled, UInt(count - filled)) }
        }
    }
    return bytes
}
