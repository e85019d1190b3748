/// base64url without padding (RFC 4648 §5), as WebAuthn's JSON carries
/// binary values.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        // Accept standard base64's two characters too, as some encoders send them.
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        case 2:
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        default: break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil for anything that is not base64url (padding is tolerated).
    public static func decode(_ text: String) -> [UInt8]? {
        var digits = Array(text.utf8)
        while digits.last == UInt8(ascii: "=") { digits.removeLast() }
        guard digits.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for digit in digits {
            let value = values[Int(digit)]
            guard value >= 0 else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}

/// Binary data that travels as base64url in JSON.
public struct Base64URLBytes: Codable, Hashable, Sendable, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = Base64URL.decode(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected base64url"))
        }
        self.bytes = bytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Base64URL.encode(bytes))
    }

    public var description: String { Base64URL.encode(bytes) }
}
