import Glibc
import SystemKit

/// A fuzzer's bytes read as a series of choices. Reading past the end
/// gives zeros and empty arrays, so every input, however short, means
/// something and a harness never has to check lengths.
struct FuzzInput {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Up to `count` bytes: fewer at the end of the input.
    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = max(offset, end) }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    /// A big-endian 16-bit length, then that many bytes (fewer at the end).
    mutating func lengthPrefixed() -> [UInt8] {
        let length = Int(byte()) << 8 | Int(byte())
        return bytes(length)
    }

    /// A record: a kind byte and a length-prefixed payload.
    mutating func record() -> (kind: UInt8, payload: [UInt8])? {
        guard !isAtEnd else { return nil }
        let kind = byte()
        return (kind, lengthPrefixed())
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] { bytes(bytes.count - offset) }
}

/// Builds the inputs `FuzzInput.record()` reads, for seeds.
struct FuzzInputWriter {
    private(set) var bytes: [UInt8] = []

    init(header: [UInt8] = []) { bytes = header }

    mutating func record(_ kind: UInt8, _ payload: [UInt8]) {
        let length = min(payload.count, 0xFFFF)
        bytes += [kind, UInt8(length >> 8), UInt8(truncatingIfNeeded: length)] + payload.prefix(length)
    }
}

/// A property every input must keep; breaking it ends the process so
/// that libFuzzer records the input, as a crash would.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError("fuzz property violated: \(message())", file: file, line: line) }
}

/// With AUTHKEYD_FUZZ_TRACE set, the harnesses say what they do, on
/// standard error: for reading what an input means (`authkeyd-fuzz TARGET FILE`).
enum FuzzTrace {
    static let isEnabled = environmentVariable("AUTHKEYD_FUZZ_TRACE") != nil
    private static let start = ContinuousClock.now

    /// One line, after the milliseconds since the first.
    static func log(_ message: @autoclosure () -> String) {
        guard isEnabled else { return }
        let elapsed = (ContinuousClock.now - start) / .microseconds(1)
        writeToStandardError("[\(Int(elapsed) / 1000).\(Int(elapsed) % 1000 / 100) ms] \(message())\n")
    }

    static func hex(_ bytes: some Collection<UInt8>, limit: Int = 16) -> String {
        let shown = bytes.prefix(limit).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return bytes.count > limit ? "\(shown)… (\(bytes.count) bytes)" : shown
    }
}
