/// Encodes `Encodable` types into a `JSONValue` tree. Optional members that
/// are nil are left out, as synthesised conformances ask.
public struct JSONValueEncoder: Sendable {
    public init() {}

    public func encode(_ value: some Encodable) throws -> JSONValue {
        let node = EncodingNode()
        try value.encode(to: ValueEncoderBox(node: node, codingPath: []))
        return node.finish()
    }
}

/// One value under construction.
private final class EncodingNode {
    enum Content {
        case value(JSONValue)
        case object(keys: [String], members: [String: EncodingNode])
        case array([EncodingNode])
    }

    var content: Content = .value(.null)

    func finish() -> JSONValue {
        switch content {
        case .value(let value): return value
        case .array(let nodes): return .array(nodes.map { $0.finish() })
        case .object(let keys, let members):
            var object = JSONObject()
            for key in keys { object[key] = members[key]!.finish() }
            return .object(object)
        }
    }

    func child(forKey key: String) -> EncodingNode {
        let node = EncodingNode()
        switch content {
        case .object(var keys, var members):
            if members.updateValue(node, forKey: key) == nil { keys.append(key) }
            content = .object(keys: keys, members: members)
        default:
            content = .object(keys: [key], members: [key: node])
        }
        return node
    }

    func appendChild() -> EncodingNode {
        let node = EncodingNode()
        if case .array(var nodes) = content {
            nodes.append(node)
            content = .array(nodes)
        } else {
            content = .array([node])
        }
        return node
    }

    var arrayCount: Int {
        if case .array(let nodes) = content { return nodes.count }
        return 0
    }
}

final class ValueEncoderBox: Encoder {
    fileprivate let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    fileprivate init(node: EncodingNode, codingPath: [any CodingKey]) {
        self.node = node
        self.codingPath = codingPath
    }

    func store(_ value: JSONValue) { node.content = .value(value) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object(keys: [], members: [:]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValue(node: node, codingPath: codingPath)
    }
}

/// Encodes one value into `node`, taking the fast path for JSON's own types.
private func encode(_ value: some Encodable, into node: EncodingNode, codingPath: [any CodingKey]) throws {
    switch value {
    case let string as String: node.content = .value(.string(string))
    case let bool as Bool: node.content = .value(.bool(bool))
    case let int as Int: node.content = .value(.integer(Int64(int)))
    case let json as JSONValue: node.content = .value(json)
    case let dictionary as any StringKeyedDictionary:
        // Dictionaries come out sorted by key, so output does not depend
        // on hashing: the same value always reads the same.
        try dictionary.encodeSorted(into: node, codingPath: codingPath)
    default: try value.encode(to: ValueEncoderBox(node: node, codingPath: codingPath))
    }
}

private protocol StringKeyedDictionary {
    func encodeSorted(into node: EncodingNode, codingPath: [any CodingKey]) throws
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    fileprivate func encodeSorted(into node: EncodingNode, codingPath: [any CodingKey]) throws {
        node.content = .object(keys: [], members: [:])
        for key in keys.sorted() {
            try AuthProtocol.encode(self[key]!, into: node.child(forKey: key), codingPath: codingPath)
        }
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(forKey: key.stringValue).content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try AuthProtocol.encode(value, into: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        ValueEncoderBox(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoderBox(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoderBox(node: node, codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoderBox(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var count: Int { node.arrayCount }

    mutating func encodeNil() throws { node.appendChild().content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try AuthProtocol.encode(value, into: node.appendChild(), codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoderBox(node: node.appendChild(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoderBox(node: node.appendChild(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoderBox(node: node.appendChild(), codingPath: codingPath) }
}

private struct SingleValue: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .value(.null) }
    mutating func encode(_ value: Bool) throws { node.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { node.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { node.content = .value(.double(value)) }
    mutating func encode(_ value: Float) throws { node.content = .value(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.content = .value(.integer(value)) }
    mutating func encode(_ value: UInt) throws { node.content = .value(.integer(Int64(clamping: value))) }
    mutating func encode(_ value: UInt8) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { node.content = .value(.integer(Int64(clamping: value))) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try AuthProtocol.encode(value, into: node, codingPath: codingPath)
    }
}
