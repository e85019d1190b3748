import Glibc
import SystemKit

/// A PIN on its way to libfido2.
///
/// The bytes live in one heap buffer that is overwritten when the last copy
/// of the PIN goes away, and the value never prints: `description` and
/// `debugDescription` are redacted so a PIN cannot reach a log by accident.
public struct PIN: Sendable, CustomStringConvertible, CustomDebugStringConvertible, ExpressibleByStringLiteral {
    private let storage: SecretBytes

    public init(_ text: String) {
        storage = SecretBytes(Array(text.utf8))
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The PIN's length in Unicode code points, as CTAP counts a minimum PIN length.
    public var codePointCount: Int {
        storage.withBytes { String(decoding: $0, as: UTF8.self).unicodeScalars.count }
    }

    /// The number of UTF-8 bytes.
    public var byteCount: Int { storage.count }

    /// The longest PIN CTAP carries: 63 bytes of UTF-8 (§6.5.5.5, padded to 64).
    public static let maximumByteCount = 63

    /// The shortest minimum a key may ask for (CTAP 2.1 §6.4: at least 4 code points).
    public static let minimumCodePointCount = 4

    public var description: String { "<redacted PIN>" }
    public var debugDescription: String { "<redacted PIN>" }

    /// Lends the PIN as a NUL-terminated C string for the duration of `body`.
    func withCString<R, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        try storage.withCString(body)
    }
}

/// Lends an optional PIN as an optional C string, as libfido2's calls take it.
func withOptionalCString<R, E: Error>(_ pin: PIN?, _ body: (UnsafePointer<CChar>?) throws(E) -> R) throws(E) -> R {
    guard let pin else { return try body(nil) }
    return try pin.withCString { (p) throws(E) -> R in try body(p) }
}
