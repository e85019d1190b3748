/// Why a byte string is not a CBOR item this project accepts.
public enum CBORDecodingError: Error, Equatable, Sendable {
    /// The input ends inside an item.
    case truncated
    /// An indefinite-length string, array or map: CTAP allows definite lengths only.
    case indefiniteLength
    /// Additional-information values 28–30, reserved by RFC 8949.
    case reservedAdditionalInformation
    /// A text string that is not valid UTF-8.
    case invalidUTF8
    /// A map that holds the same key twice.
    case duplicateMapKey
    /// Arrays and maps nested deeper than the decoder's limit.
    case nestingTooDeep
    /// Bytes left over after the one item that was asked for.
    case trailingBytes
    /// A simple value other than false, true, null and undefined.
    case unsupportedSimpleValue
}

/// Decodes CBOR under explicit limits, as input from an untrusted peer.
public struct CBORDecoder: Sendable {
    /// How deep arrays and maps may nest. CTAP senders use at most 4 levels.
    public var maxDepth: Int

    public init(maxDepth: Int = 16) {
        self.maxDepth = maxDepth
    }

    /// Decodes exactly one item that fills the whole input.
    public func decode(_ bytes: some Collection<UInt8>) throws(CBORDecodingError) -> CBOR {
        let input = Array(bytes)
        var reader = Reader(bytes: input, maxDepth: maxDepth)
        let item = try reader.readItem(depth: 0)
        guard reader.offset == input.count else { throw .trailingBytes }
        return item
    }

    /// Decodes the first item of the input and says how many bytes it took,
    /// for formats where CBOR is followed by more data (authenticator data).
    public func decodePrefix(_ bytes: some Collection<UInt8>) throws(CBORDecodingError) -> (
        item: CBOR, length: Int
    ) {
        var reader = Reader(bytes: Array(bytes), maxDepth: maxDepth)
        let item = try reader.readItem(depth: 0)
        return (item, reader.offset)
    }
}

extension CBOR {
    /// Decodes exactly one item with the default limits.
    public static func decode(_ bytes: some Collection<UInt8>) throws(CBORDecodingError) -> CBOR {
        try CBORDecoder().decode(bytes)
    }
}

private struct Reader {
    let bytes: [UInt8]
    let maxDepth: Int
    var offset = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    var remaining: Int { bytes.count - offset }

    mutating func readByte() throws(CBORDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readBigEndian(_ count: Int) throws(CBORDecodingError) -> UInt64 {
        guard remaining >= count else { throw .truncated }
        var value: UInt64 = 0
        for i in 0..<count { value = value << 8 | UInt64(bytes[offset + i]) }
        offset += count
        return value
    }

    /// Reads the argument that follows an initial byte's additional information.
    mutating func readArgument(_ info: UInt8) throws(CBORDecodingError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24: return try readBigEndian(1)
        case 25: return try readBigEndian(2)
        case 26: return try readBigEndian(4)
        case 27: return try readBigEndian(8)
        case 31: throw .indefiniteLength
        default: throw .reservedAdditionalInformation
        }
    }

    /// A length argument, checked against what the input can still hold so a
    /// forged length cannot make us reserve memory.
    mutating func readLength(_ info: UInt8, minimumItemSize: Int) throws(CBORDecodingError) -> Int {
        let length = try readArgument(info)
        guard length <= UInt64(remaining / minimumItemSize) else { throw .truncated }
        return Int(length)
    }

    mutating func readBytes(_ count: Int) throws(CBORDecodingError) -> [UInt8] {
        guard remaining >= count else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func readItem(depth: Int) throws(CBORDecodingError) -> CBOR {
        let initial = try readByte()
        let major = initial >> 5
        let info = initial & 0x1F
        switch major {
        case 0:
            return .unsigned(try readArgument(info))
        case 1:
            return .negative(try readArgument(info))
        case 2:
            return .bytes(try readBytes(try readLength(info, minimumItemSize: 1)))
        case 3:
            let raw = try readBytes(try readLength(info, minimumItemSize: 1))
            guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
            return .text(text)
        case 4:
            guard depth < maxDepth else { throw .nestingTooDeep }
            let count = try readLength(info, minimumItemSize: 1)
            var items: [CBOR] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try readItem(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard depth < maxDepth else { throw .nestingTooDeep }
            let count = try readLength(info, minimumItemSize: 2)
            var map = CBORMap()
            var seen = Set<CBOR>()
            for _ in 0..<count {
                let key = try readItem(depth: depth + 1)
                let value = try readItem(depth: depth + 1)
                guard seen.insert(key).inserted else { throw .duplicateMapKey }
                map.appendUnchecked(key, value)
            }
            return .map(map)
        case 6:
            let tag = try readArgument(info)
            guard depth < maxDepth else { throw .nestingTooDeep }
            return .tagged(tag, try readItem(depth: depth + 1))
        default:
            return try readSimple(info)
        }
    }

    mutating func readSimple(_ info: UInt8) throws(CBORDecodingError) -> CBOR {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 25: return .float(Double(Float16Bits(UInt16(try readBigEndian(2))).value))
        case 26: return .float(Double(Float(bitPattern: UInt32(try readBigEndian(4)))))
        case 27: return .float(Double(bitPattern: try readBigEndian(8)))
        case 31: throw .indefiniteLength
        case 28...30: throw .reservedAdditionalInformation
        default: throw .unsupportedSimpleValue
        }
    }
}

/// IEEE 754 half precision, decoded by hand: `Float16` is not available on
/// every platform Swift builds for.
private struct Float16Bits {
    let bits: UInt16
    init(_ bits: UInt16) { self.bits = bits }

    var value: Float {
        let sign: Float = bits & 0x8000 != 0 ? -1 : 1
        let exponent = Int((bits >> 10) & 0x1F)
        let mantissa = Float(bits & 0x3FF)
        switch exponent {
        case 0: return sign * mantissa * 0x1p-24
        case 31: return mantissa == 0 ? sign * .infinity : .nan
        default: return sign * (1 + mantissa / 1024) * Float(sign: .plus, exponent: exponent - 15, significand: 1)
        }
    }
}
