/// Encodes `Encodable` types into a `JSONValue` tree. Optional members that
/// are nil are left out, as synthesised conformances ask.
///
/// Every reply and notification the daemon sends comes through here, so
/// the common case is kept short: a member of JSON's own types is stored as
/// its value, with no node or nested encoder made for it; nodes are made
/// only for nested containers and are filled in place (a node's members
/// were once copied whenever one was added, being an enum payload the node
/// still held); the coding path is only put together when it is asked for
/// (an error).
public struct JSONValueEncoder: Sendable {
    public init() {}

    public func encode(_ value: some Encodable) throws -> JSONValue {
        if let json = Scalar.json(value) { return json }
        let node = EncodingNode()
        try value.encode(to: ValueEncoderBox(node: node, path: .root))
        return node.finish()
    }
}

/// The values stored as they are, without asking them to encode
/// themselves: JSON's own types, told apart by their type (a comparison of
/// type metadata, where a cast to each searched the conformance tables).
private enum Scalar {
    static func json<T: Encodable>(_ value: T) -> JSONValue? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == JSONValue.self { return (value as! JSONValue) }
        if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == UInt32.self { return .integer(Int64(unsafeBitCast(value, to: UInt32.self))) }
        if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
        return nil
    }
}

/// Where a container is, for `codingPath`: made into an array only when
/// asked, not for every member.
private indirect enum CodingPath {
    case root
    case child(CodingPath, any CodingKey)

    var keys: [any CodingKey] {
        switch self {
        case .root: return []
        case .child(let parent, let key): return parent.keys + [key]
        }
    }
}

/// One value under construction: a finished value, or an object or array
/// whose members are values or nodes of their own.
private final class EncodingNode {
    enum Kind {
        case value
        case object
        case array
    }

    enum Member {
        case value(JSONValue)
        case node(EncodingNode)

        func finish() -> JSONValue {
            switch self {
            case .value(let value): return value
            case .node(let node): return node.finish()
            }
        }
    }

    private var kind = Kind.value
    private var value = JSONValue.null
    private var keys: [String] = []
    private var members: [Member] = []

    func finish() -> JSONValue {
        switch kind {
        case .value: return value
        case .array: return .array(members.map { $0.finish() })
        case .object:
            var object = JSONObject()
            for (key, member) in zip(keys, members) { _ = object.appendNew(key, member.finish()) }
            return .object(object)
        }
    }

    func store(_ value: JSONValue) {
        kind = .value
        self.value = value
        keys = []
        members = []
    }

    /// Makes this node an object, keeping its members if it is one.
    func becomeObject() {
        guard kind != .object else { return }
        kind = .object
        keys = []
        members = []
    }

    /// Makes this node an array, keeping its elements if it is one.
    func becomeArray() {
        guard kind != .array else { return }
        kind = .array
        keys = []
        members = []
    }

    /// Sets member `key`; a key set again keeps its place, with the new value.
    func set(_ key: String, _ member: Member) {
        becomeObject()
        if let position = keys.firstIndex(of: key) {
            members[position] = member
        } else {
            keys.append(key)
            members.append(member)
        }
    }

    /// Adds member `key` of a map whose keys are all different (a dictionary's).
    func add(_ key: String, _ member: Member) {
        becomeObject()
        keys.append(key)
        members.append(member)
    }

    func child(forKey key: String) -> EncodingNode {
        let node = EncodingNode()
        set(key, .node(node))
        return node
    }

    func append(_ member: Member) {
        becomeArray()
        members.append(member)
    }

    func appendChild() -> EncodingNode {
        let node = EncodingNode()
        append(.node(node))
        return node
    }

    var arrayCount: Int { kind == .array ? members.count : 0 }
}

final class ValueEncoderBox: Encoder {
    fileprivate let node: EncodingNode
    fileprivate let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    fileprivate init(node: EncodingNode, path: CodingPath) {
        self.node = node
        self.path = path
    }

    func store(_ value: JSONValue) { node.store(value) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedContainer(node: node, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValue(node: node, path: path)
    }
}

/// One member: its value when it is JSON's own, else a node it encodes
/// itself into.
private func encodeMember(_ value: some Encodable, path: CodingPath) throws -> EncodingNode.Member {
    if let json = Scalar.json(value) { return .value(json) }
    let node = EncodingNode()
    try encode(value, into: node, path: path)
    return .node(node)
}

private func encode(_ value: some Encodable, into node: EncodingNode, path: CodingPath) throws {
    if let json = Scalar.json(value) { return node.store(json) }
    if let dictionary = value as? any StringKeyedDictionary {
        // Dictionaries come out sorted by key, so output does not depend
        // on hashing: the same value always reads the same.
        return try dictionary.encodeSorted(into: node, path: path)
    }
    try value.encode(to: ValueEncoderBox(node: node, path: path))
}

private protocol StringKeyedDictionary {
    func encodeSorted(into node: EncodingNode, path: CodingPath) throws
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    fileprivate func encodeSorted(into node: EncodingNode, path: CodingPath) throws {
        node.store(.null)
        node.becomeObject()
        for key in keys.sorted() {
            node.add(key, try encodeMember(self[key]!, path: path))
        }
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }

    mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, .value(.null)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { node.set(key.stringValue, .value(.bool(value))) }
    mutating func encode(_ value: String, forKey key: Key) throws { node.set(key.stringValue, .value(.string(value))) }
    mutating func encode(_ value: Int, forKey key: Key) throws { node.set(key.stringValue, .value(.integer(Int64(value)))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { node.set(key.stringValue, .value(.integer(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { node.set(key.stringValue, .value(.integer(Int64(value)))) }
    mutating func encode(_ value: Double, forKey key: Key) throws { node.set(key.stringValue, .value(.double(value))) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.set(key.stringValue, try encodeMember(value, path: .child(path, key)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        ValueEncoderBox(node: node.child(forKey: key.stringValue), path: .child(path, key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoderBox(node: node.child(forKey: key.stringValue), path: .child(path, key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoderBox(node: node, path: path) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoderBox(node: node.child(forKey: key.stringValue), path: .child(path, key))
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }
    var count: Int { node.arrayCount }

    mutating func encodeNil() throws { node.append(.value(.null)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.append(try encodeMember(value, path: path))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoderBox(node: node.appendChild(), path: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoderBox(node: node.appendChild(), path: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoderBox(node: node.appendChild(), path: path) }
}

private struct SingleValue: SingleValueEncodingContainer {
    let node: EncodingNode
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }

    mutating func encodeNil() throws { node.store(.null) }
    mutating func encode(_ value: Bool) throws { node.store(.bool(value)) }
    mutating func encode(_ value: String) throws { node.store(.string(value)) }
    mutating func encode(_ value: Double) throws { node.store(.double(value)) }
    mutating func encode(_ value: Float) throws { node.store(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { node.store(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.store(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.store(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.store(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.store(.integer(value)) }
    mutating func encode(_ value: UInt) throws { node.store(.integer(Int64(clamping: value))) }
    mutating func encode(_ value: UInt8) throws { node.store(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { node.store(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { node.store(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { node.store(.integer(Int64(clamping: value))) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try AuthProtocol.encode(value, into: node, path: path)
    }
}
