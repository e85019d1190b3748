/// Splits a byte stream into NDJSON lines (authkeyd-protocol(7), TRANSPORT).
///
/// A pure type: bytes in, lines out, however the bytes were chunked. The
/// length limit is enforced before anything is buffered, so a client cannot
/// make the daemon hold more than `maxLineLength` bytes for it. A line that
/// arrives whole within one chunk is handed out without being copied.
public struct LineFramer: Sendable {
    public enum Event {
        /// One line, without its `\n` (and without a `\r` before it).
        case line(UnsafeBufferPointer<UInt8>)
        /// The current line passed the limit; the framer stops here.
        case lineTooLong
    }

    public let maxLineLength: Int
    private var partial: [UInt8] = []
    /// After `lineTooLong` nothing more is framed: the connection is over.
    public private(set) var isBroken = false

    public init(maxLineLength: Int = 1 << 20) {
        self.maxLineLength = maxLineLength
    }

    /// Bytes of an unfinished line held now.
    public var bufferedByteCount: Int { partial.count }

    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ handle: (Event) -> Void) {
        guard !isBroken, let base = chunk.baseAddress else { return }
        let bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: chunk.count)
        var start = 0
        while start < bytes.count {
            guard let newline = bytes[start...].firstIndex(of: 0x0A) else {
                // No end of line in this chunk: buffer the rest, within the limit.
                guard partial.count + (bytes.count - start) <= maxLineLength else { return fail(handle) }
                partial.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
                return
            }
            guard partial.count + (newline - start) <= maxLineLength else { return fail(handle) }
            if partial.isEmpty {
                emit(UnsafeBufferPointer(rebasing: bytes[start..<newline]), handle)
            } else {
                partial.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<newline]))
                partial.withUnsafeBufferPointer { emit($0, handle) }
                partial.removeAll(keepingCapacity: partial.capacity <= 65_536)
            }
            start = newline + 1
        }
    }

    public mutating func feed(_ bytes: [UInt8], _ handle: (Event) -> Void) {
        bytes.withUnsafeBytes { feed($0, handle) }
    }

    private func emit(_ line: UnsafeBufferPointer<UInt8>, _ handle: (Event) -> Void) {
        var line = line
        if line.last == 0x0D { line = UnsafeBufferPointer(rebasing: line.dropLast()) }
        // Blank lines between messages carry nothing.
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
        handle(.line(line))
    }

    private mutating func fail(_ handle: (Event) -> Void) {
        isBroken = true
        partial = []
        handle(.lineTooLong)
    }
}
