/// Why bytes are not one JSON text, and where.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        case unexpectedEnd
        case unexpectedCharacter(UInt8)
        case invalidNumber
        case invalidEscape
        case invalidUnicode
        case controlCharacterInString
        case nestingTooDeep(limit: Int)
        case duplicateKey(String)
        case trailingCharacters
    }

    public let kind: Kind
    /// Byte offset in the input.
    public let offset: Int

    public var description: String {
        switch kind {
        case .unexpectedEnd: return "unexpected end of input"
        case .unexpectedCharacter(let byte):
            return byte == 0 ? "NUL byte at offset \(offset)" : "unexpected character at offset \(offset)"
        case .invalidNumber: return "invalid number at offset \(offset)"
        case .invalidEscape: return "invalid escape sequence at offset \(offset)"
        case .invalidUnicode: return "invalid UTF-8 or unpaired surrogate at offset \(offset)"
        case .controlCharacterInString: return "unescaped control character in a string at offset \(offset)"
        case .nestingTooDeep(let limit): return "nesting deeper than \(limit) levels at offset \(offset)"
        case .duplicateKey(let key): return "duplicate member \"\(key)\" at offset \(offset)"
        case .trailingCharacters: return "more than one JSON value on the line (offset \(offset))"
        }
    }
}

/// A strict RFC 8259 parser for untrusted input: one value per call,
/// nesting bounded, duplicate object members and invalid UTF-8 refused.
public struct JSONParser: Sendable {
    public var maxDepth: Int

    public init(maxDepth: Int = 64) {
        self.maxDepth = maxDepth
    }

    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer) }
        }.get()
    }

    public func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var reader = Reader(bytes: buffer, maxDepth: maxDepth)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.offset == buffer.count else { throw reader.error(.trailingCharacters) }
        return value
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var offset = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func error(_ kind: JSONParseError.Kind) -> JSONParseError { JSONParseError(kind: kind, offset: offset) }

    var atEnd: Bool { offset >= bytes.count }

    func peek() throws(JSONParseError) -> UInt8 {
        guard offset < bytes.count else { throw error(.unexpectedEnd) }
        return bytes[offset]
    }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    mutating func expect(_ literal: StaticString, value: JSONValue) throws(JSONParseError) -> JSONValue {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw error(.unexpectedEnd) }
        for i in 0..<count where bytes[offset + i] != literal.utf8Start[i] {
            offset += i
            throw error(.unexpectedCharacter(bytes[offset]))
        }
        offset += count
        return value
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", value: .bool(true))
        case UInt8(ascii: "f"): return try expect("false", value: .bool(false))
        case UInt8(ascii: "n"): return try expect("null", value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case let other: throw error(.unexpectedCharacter(other))
        }
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw error(.nestingTooDeep(limit: maxDepth)) }
        offset += 1
        var object = JSONObject()
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            offset += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard try peek() == UInt8(ascii: "\"") else { throw error(.unexpectedCharacter(bytes[offset])) }
            let keyOffset = offset
            let key = try string()
            skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else { throw error(.unexpectedCharacter(bytes[offset])) }
            offset += 1
            skipWhitespace()
            let member = try value(depth: depth)
            guard object.appendNew(key, member) else { throw JSONParseError(kind: .duplicateKey(key), offset: keyOffset) }
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                return .object(object)
            case let other: throw error(.unexpectedCharacter(other))
            }
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw error(.nestingTooDeep(limit: maxDepth)) }
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return .array(elements)
            case let other: throw error(.unexpectedCharacter(other))
            }
        }
    }

    mutating func number() throws(JSONParseError) -> JSONValue {
        let start = offset
        var isInteger = true
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard !atEnd else { throw error(.unexpectedEnd) }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard isDigit(bytes[offset]) else { throw error(.invalidNumber) }
            while !atEnd && isDigit(bytes[offset]) { offset += 1 }
        }
        if !atEnd && bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard !atEnd, isDigit(bytes[offset]) else { throw error(.invalidNumber) }
            while !atEnd && isDigit(bytes[offset]) { offset += 1 }
        }
        if !atEnd && (bytes[offset] | 0x20) == UInt8(ascii: "e") {
            isInteger = false
            offset += 1
            if !atEnd && (bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-")) { offset += 1 }
            guard !atEnd, isDigit(bytes[offset]) else { throw error(.invalidNumber) }
            while !atEnd && isDigit(bytes[offset]) { offset += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else {
            offset = start
            throw error(.invalidNumber)
        }
        return .double(double)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// A string; the common case without escapes is one validated copy.
    mutating func string() throws(JSONParseError) -> String {
        offset += 1
        let start = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                guard let text = String(validating: raw, as: UTF8.self) else {
                    throw JSONParseError(kind: .invalidUnicode, offset: start)
                }
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte < 0x20 { throw error(.controlCharacterInString) }
            offset += 1
        }
        throw error(.unexpectedEnd)
    }

    mutating func escapedString(from start: Int) throws(JSONParseError) -> String {
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw JSONParseError(kind: .invalidUnicode, offset: start)
                }
                return text
            case UInt8(ascii: "\\"):
                offset += 1
                guard offset < bytes.count else { throw error(.unexpectedEnd) }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try unicodeEscape()
                    utf8.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    offset -= 1
                    throw error(.invalidEscape)
                }
            default:
                if byte < 0x20 { throw error(.controlCharacterInString) }
                utf8.append(byte)
                offset += 1
            }
        }
        throw error(.unexpectedEnd)
    }

    /// `\uXXXX`, joining a surrogate pair; an unpaired surrogate is an error.
    mutating func unicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let first = try hexQuad()
        if (0xD800...0xDBFF).contains(first) {
            guard offset + 2 <= bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
            else { throw error(.invalidUnicode) }
            offset += 2
            let second = try hexQuad()
            guard (0xDC00...0xDFFF).contains(second) else { throw error(.invalidUnicode) }
            let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw error(.invalidUnicode) }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw error(.invalidUnicode) }
        return scalar
    }

    mutating func hexQuad() throws(JSONParseError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw error(.unexpectedEnd) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape)
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }
}
