import Glibc

/// A failed system call: which one, and `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let call: String
    public let code: Int32

    public init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// Calls `body` again while it fails with EINTR; throws on any other failure.
/// `body` returns -1 on failure with `errno` set, as system calls do.
@discardableResult
public func retryingOnInterrupt<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        if errno != EINTR { throw SystemError(call) }
    }
}

/// Like `retryingOnInterrupt`, for a non-blocking descriptor: nil when the
/// call would block (EAGAIN), which is not a failure but "not now".
public func retryingOnInterruptUnlessWouldBlock<T: BinaryInteger>(
    _ call: String, _ body: () -> T
) throws(SystemError) -> T? {
    while true {
        let result = body()
        if result != -1 { return result }
        switch errno {
        case EINTR: continue
        case EAGAIN: return nil
        default: throw SystemError(call)
        }
    }
}
