/// A secret's bytes (a PIN) in one heap buffer, overwritten with zeros when
/// the last reference goes: unlike an `[UInt8]`, whose copy-on-write
/// copies a zeroing cannot reach, there is only ever this one buffer.
/// A NUL follows the bytes, so that C calls can borrow them as a string.
public final class SecretBytes: @unchecked Sendable {
    // Immutable after init; only deinit writes, when no one else can read.
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    public let count: Int

    public init(_ bytes: [UInt8]) {
        count = bytes.count
        buffer = .allocate(capacity: bytes.count + 1)
        _ = buffer.initialize(from: bytes)
        buffer[bytes.count] = 0
    }

    /// Copies a NUL-terminated C string, without an intermediate array.
    public init(cString: UnsafePointer<CChar>) {
        let bytes = UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self)
        var length = 0
        while bytes[length] != 0 { length += 1 }
        count = length
        buffer = .allocate(capacity: length + 1)
        buffer.baseAddress!.initialize(from: bytes, count: length + 1)
    }

    deinit {
        zeroSecret(UnsafeMutableRawBufferPointer(buffer))
        buffer.deallocate()
    }

    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(rebasing: buffer[0..<count]))
    }

    public func withCString<R, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        try buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { (p) throws(E) -> R in
            try body(UnsafePointer(p))
        }
    }
}
