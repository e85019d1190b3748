internal import CSystem
import Glibc

/// A level-triggered epoll(7) set: descriptors watched for input (or a
/// hang-up), each reported by the token it was watched with.
///
/// For one thread (or one serial queue) at a time. The descriptor of the
/// set itself is pollable: it is readable while any watched descriptor is
/// ready, so a Dispatch read source on `descriptor` wakes its queue for
/// all of them at once.
public final class Epoll {
    public let descriptor: Int32
    private var tokens: [UInt64]

    /// `capacity`: the most ready descriptors one `ready` call reports
    /// (at most 512).
    public init(capacity: Int = 256) throws(SystemError) {
        descriptor = authkeyd_epoll_create()
        guard descriptor >= 0 else { throw SystemError("epoll_create1") }
        tokens = [UInt64](repeating: 0, count: min(capacity, 512))
    }

    deinit { FileDescriptor.close(descriptor) }

    /// Watches `fd` for input and hang-up until `forget(fd)`.
    public func watch(_ fd: Int32, token: UInt64) throws(SystemError) {
        guard authkeyd_epoll_watch(descriptor, fd, token) == 0 else { throw SystemError("epoll_ctl") }
    }

    /// Stops watching `fd`; call it before closing `fd`.
    public func forget(_ fd: Int32) {
        _ = authkeyd_epoll_unwatch(descriptor, fd)
    }

    /// The tokens of the descriptors ready now, waiting up to
    /// `timeoutMilliseconds` for one (0: not at all; -1: for ever).
    public func ready(timeoutMilliseconds: Int32) -> ArraySlice<UInt64> {
        let count = tokens.withUnsafeMutableBufferPointer { buffer in
            authkeyd_epoll_ready(descriptor, buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
        }
        return tokens[0..<max(0, Int(count))]
    }
}
