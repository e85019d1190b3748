extension CBOR {
    /// The CTAP2 canonical encoding of the item: shortest integer and length
    /// forms, definite lengths, map keys sorted by major type, then encoded
    /// length, then bytes (CTAP 2.1 §8 "Message Encoding").
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(into: &out)
        return out
    }

    public func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n):
            Self.writeHead(major: 0, argument: n, into: &out)
        case .negative(let n):
            Self.writeHead(major: 1, argument: n, into: &out)
        case .bytes(let b):
            Self.writeHead(major: 2, argument: UInt64(b.count), into: &out)
            out.append(contentsOf: b)
        case .text(let s):
            let utf8 = Array(s.utf8)
            Self.writeHead(major: 3, argument: UInt64(utf8.count), into: &out)
            out.append(contentsOf: utf8)
        case .array(let items):
            Self.writeHead(major: 4, argument: UInt64(items.count), into: &out)
            for item in items { item.encode(into: &out) }
        case .map(let map):
            Self.writeHead(major: 5, argument: UInt64(map.count), into: &out)
            for (key, value) in Self.canonicalOrder(map) {
                out.append(contentsOf: key)
                value.encode(into: &out)
            }
        case .tagged(let tag, let item):
            Self.writeHead(major: 6, argument: tag, into: &out)
            item.encode(into: &out)
        case .bool(let b):
            out.append(b ? 0xF5 : 0xF4)
        case .null:
            out.append(0xF6)
        case .undefined:
            out.append(0xF7)
        case .float(let d):
            out.append(0xFB)
            Self.appendBigEndian(d.bitPattern, byteCount: 8, into: &out)
        }
    }

    /// The entries of a map with their keys already encoded, in canonical order.
    static func canonicalOrder(_ map: CBORMap) -> [(key: [UInt8], value: CBOR)] {
        map.entries
            .map { (key: $0.key.encoded(), value: $0.value) }
            .sorted { a, b in
                let majorA = a.key[0] >> 5, majorB = b.key[0] >> 5
                if majorA != majorB { return majorA < majorB }
                if a.key.count != b.key.count { return a.key.count < b.key.count }
                return a.key.lexicographicallyPrecedes(b.key)
            }
    }

    static func writeHead(major: UInt8, argument: UInt64, into out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24:
            out.append(type | UInt8(argument))
        case 24...0xFF:
            out.append(type | 24)
            out.append(UInt8(argument))
        case 0x100...0xFFFF:
            out.append(type | 25)
            appendBigEndian(argument, byteCount: 2, into: &out)
        case 0x1_0000...0xFFFF_FFFF:
            out.append(type | 26)
            appendBigEndian(argument, byteCount: 4, into: &out)
        default:
            out.append(type | 27)
            appendBigEndian(argument, byteCount: 8, into: &out)
        }
    }

    static func appendBigEndian(_ value: UInt64, byteCount: Int, into out: inout [UInt8]) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
