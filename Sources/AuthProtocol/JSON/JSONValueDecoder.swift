/// Decodes `Decodable` types from a `JSONValue` tree, so that method
/// parameters are declared as plain structs. Absent optional members are
/// nil; `null` counts as absent. Errors name the path: `rp.id`.
public struct JSONValueDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: []))
    }
}

/// A decoding failure described for a person: the path and what was wrong.
public struct JSONDecodingError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let problem: String

    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }

    init(_ codingPath: [any CodingKey], _ problem: String) {
        path = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            .trimmingPrefix(".")
        self.problem = problem
    }
}

extension String {
    fileprivate func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw JSONDecodingError(codingPath, "expected an object, got \(value.typeName)")
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw JSONDecodingError(codingPath, "expected an array, got \(value.typeName)")
        }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValue(value: value, codingPath: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    func member(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw JSONDecodingError(codingPath + [key], "is required")
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { object[key.stringValue]?.isNull ?? true }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try describing { try T(from: ValueDecoder(value: try member(key), codingPath: codingPath + [key])) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try describing { try T(from: ValueDecoder(value: value, codingPath: codingPath + [key])) }
    }

    // JSON's own types, read from the member when it has the expected
    // type: one look-up, and no nested decoder (the protocol's defaults
    // look a member up three times, then decode it through a decoder and
    // a container of its own). A member of another type takes the general
    // path, which says what is wrong with it.

    func decode(_ type: String.Type, forKey key: Key) throws -> String { try member(key, \.stringValue) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try memberIfPresent(key, \.stringValue) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try member(key, \.boolValue) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try memberIfPresent(key, \.boolValue) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try member(key, Self.int) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try memberIfPresent(key, Self.int) }

    private static func int(_ value: JSONValue) -> Int? {
        if case .integer(let n) = value { return Int(exactly: n) }
        return nil
    }

    private func member<T: Decodable>(_ key: Key, _ read: (JSONValue) -> T?) throws -> T {
        if let value = object[key.stringValue], let read = read(value) { return read }
        return try decode(T.self, forKey: key)
    }

    private func memberIfPresent<T: Decodable>(_ key: Key, _ read: (JSONValue) -> T?) throws -> T? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        if let read = read(value) { return read }
        return try decode(T.self, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(object), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: try member(key), codingPath: codingPath + [key])
    }
}

/// Turns the standard library's `DecodingError` (thrown by types' own
/// `init(from:)`) into a `JSONDecodingError` that names the path.
private func describing<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch DecodingError.dataCorrupted(let context) {
        throw JSONDecodingError(context.codingPath, context.debugDescription)
    } catch DecodingError.typeMismatch(_, let context) {
        throw JSONDecodingError(context.codingPath, context.debugDescription)
    } catch DecodingError.valueNotFound(_, let context) {
        throw JSONDecodingError(context.codingPath, context.debugDescription)
    } catch DecodingError.keyNotFound(let key, let context) {
        throw JSONDecodingError(context.codingPath + [key], "is required")
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else { throw JSONDecodingError(codingPath, "has too few elements") }
        defer { currentIndex += 1 }
        return ValueDecoder(value: elements[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: try next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    { try next().container(keyedBy: type) }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleValue: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func mismatch(_ expected: String) -> JSONDecodingError {
        JSONDecodingError(codingPath, "expected \(expected), got \(value.typeName)")
    }

    func decodeNil() -> Bool { value.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard let bool = value.boolValue else { throw mismatch("a boolean") }
        return bool
    }

    func decode(_ type: String.Type) throws -> String {
        guard let string = value.stringValue else { throw mismatch("a string") }
        return string
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .integer(let n): return Double(n)
        case .double(let d): return d
        default: throw mismatch("a number")
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard let n = value.integerValue else { throw mismatch("an integer") }
        guard let exact = T(exactly: n) else {
            throw JSONDecodingError(codingPath, "\(n) is out of range")
        }
        return exact
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if type == JSONValue.self { return value as! T }
        return try T(from: ValueDecoder(value: value, codingPath: codingPath))
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        // Only our own decoder hands over a whole tree; others decode piecewise.
        if let own = decoder as? ValueDecoder {
            self = own.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            let object = try container.decode([String: JSONValue].self)
            var result = JSONObject()
            for key in object.keys.sorted() { result[key] = object[key] }
            self = .object(result)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if let own = encoder as? ValueEncoderBox {
            own.store(self)
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .integer(let n): try container.encode(n)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o):
            var dictionary: [String: JSONValue] = [:]
            for (key, value) in o { dictionary[key] = value }
            try container.encode(dictionary)
        }
    }
}
