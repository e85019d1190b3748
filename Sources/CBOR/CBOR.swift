/// A CBOR data item (RFC 8949), limited to what CTAP 2.1 uses.
///
/// CTAP messages are CBOR with definite lengths only and maps keyed by small
/// integers or text. Floating-point values are not part of CTAP; they are
/// decoded (so that a message carrying one gets a precise error) but never
/// produced by this project.
public indirect enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    /// The negative integer `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map(CBORMap)
    case tagged(UInt64, CBOR)
    case bool(Bool)
    case null
    case undefined
    case float(Double)
}

extension CBOR {
    /// An integer item for any `Int`.
    public static func int(_ value: Int) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    /// The value of an integer item that fits an `Int`, else nil.
    public var intValue: Int? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): return n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: return nil
        }
    }

    public var unsignedValue: UInt64? {
        if case .unsigned(let n) = self { return n }
        return nil
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let b) = self { return b }
        return nil
    }

    public var textValue: String? {
        if case .text(let s) = self { return s }
        return nil
    }

    public var arrayValue: [CBOR]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var mapValue: CBORMap? {
        if case .map(let m) = self { return m }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
}

extension CBOR: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral
{
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: CBOR...) { self = .array(elements) }
}
