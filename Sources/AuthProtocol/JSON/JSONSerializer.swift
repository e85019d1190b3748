extension JSONValue {
    /// Compact JSON text, UTF-8, with no newline: ready to frame as one line.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        serialize(into: &out)
        return out
    }

    public func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let n): out.append(contentsOf: String(n).utf8)
        case .double(let d):
            // JSON has no NaN or infinity.
            out.append(contentsOf: (d.isFinite ? "\(d)" : "null").utf8)
        case .string(let s): Self.serializeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in object {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.serializeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func serializeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // Most strings (ids, base64url, names) need no escape: copied
            // in one go up to the first byte that does.
            var clean = 0
            for byte in utf8 {
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F { break }
                clean += 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[0..<clean]))
            for byte in utf8[clean...] { appendEscaped(byte, into: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscaped(_ byte: UInt8, into out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(0x5C); out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C); out.append(0x5C)
        case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
        case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
        case 0..<0x20, 0x7F:
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigit(byte >> 4), hexDigit(byte & 0xF)])
        default: out.append(byte)
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The JSON text as a String, for logs, tests and man-page examples.
    public var jsonText: String { String(decoding: serialized(), as: UTF8.self) }
}
