/// A JSON value (RFC 8259), as the protocol exchanges it.
///
/// Integers that fit 64 bits stay integers, so that ids and counters round-
/// trip exactly; other numbers are doubles.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var integerValue: Int64? {
        switch self {
        case .integer(let n): return n
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int64(d)
        default: return nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// The JSON type name, for error messages ("expected an object, got a string").
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON object that remembers the order of its members (for output that
/// reads the way it was built) and finds them by name.
///
/// The members are kept in one array, in order: a protocol object has a
/// handful of members, and comparing a handful of short keys costs less
/// than hashing one, and building, walking and serialising the object
/// touches one allocation instead of two (perf on bench row 1: the
/// parser's, decoder's and serialiser's hashing and copying were a good
/// part of what a request cost). Past `indexedCount` members an index by
/// name is kept as well, so that a large object (a listing, a map) is
/// still searched in constant time. (CBOR's `CBORMap` is built the same
/// way, for the same reason.)
public struct JSONObject: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
    private var members: [(key: String, value: JSONValue)] = []
    /// Position by key, once there are more than `indexedCount` members.
    private var index: [String: Int]?
    static let indexedCount = 12

    public init() {}

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members.reserveCapacity(elements.count)
        for (key, value) in elements { self[key] = value }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return members.firstIndex { $0.key == key }
    }

    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let newValue {
                if let position = position(of: key) {
                    members[position].value = newValue
                } else {
                    append(key, newValue)
                }
            } else if let position = position(of: key) {
                members.remove(at: position)
                index = nil
                if members.count > Self.indexedCount { buildIndex() }
            }
        }
    }

    /// Adds a member the parser has already checked is new.
    mutating func appendNew(_ key: String, _ value: JSONValue) -> Bool {
        guard position(of: key) == nil else { return false }
        append(key, value)
        return true
    }

    private mutating func append(_ key: String, _ value: JSONValue) {
        members.append((key, value))
        if index != nil {
            index?[key] = members.count - 1
        } else if members.count > Self.indexedCount {
            buildIndex()
        }
    }

    private mutating func buildIndex() {
        var built = [String: Int](minimumCapacity: members.count * 2)
        for (position, member) in members.enumerated() { built[member.key] = position }
        index = built
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    /// Equal when they have the same members, in whatever order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    /// Independent of the members' order, as equality is.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var one = Hasher()
            one.combine(member.key)
            one.combine(member.value)
            combined ^= one.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
    public init(nilLiteral: ()) { self = .null }
}
