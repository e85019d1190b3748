internal import CCrypto

/// A libcrypto operation failed; `operation` names the OpenSSL call.
///
/// The message carries no key material: only what was attempted and
/// OpenSSL's own reason string.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let reason: String

    init(_ operation: String) {
        self.operation = operation
        let code = ERR_get_error()
        if code == 0 {
            reason = "failed"
        } else {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reason = string(fromNulTerminated: buffer)
        }
        ERR_clear_error()
    }

    init(_ operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "\(operation): \(reason)" }
}

/// Throws a `CryptoError` naming `operation` unless `result` is 1, OpenSSL's success.
@inline(__always)
func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(CryptoError) {
    guard result == 1 else { throw CryptoError(operation()) }
}

/// Unwraps a pointer OpenSSL returned, or throws naming the call that failed.
@inline(__always)
func unwrap<T>(_ pointer: T?, _ operation: @autoclosure () -> String) throws(CryptoError) -> T {
    guard let pointer else { throw CryptoError(operation()) }
    return pointer
}

/// The text of a NUL-terminated C buffer that OpenSSL filled.
func string(fromNulTerminated buffer: [CChar]) -> String {
    String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
