import CBOR

/// Typed access to a CTAP request's parameter map, failing with the status
/// codes CTAP 2.1 §8 prescribes: a member of the wrong type is
/// CBOR_UNEXPECTED_TYPE, a missing required one MISSING_PARAMETER.
struct Parameters {
    let map: CBORMap

    init(_ map: CBORMap) { self.map = map }

    /// Decodes the CBOR after a command byte; an empty body is an empty map.
    init(decoding body: ArraySlice<UInt8>) throws(CTAP2Status) {
        guard !body.isEmpty else {
            self.init([:])
            return
        }
        let item: CBOR
        do { item = try CBORDecoder(maxDepth: 8).decode(body) } catch { throw .invalidCBOR }
        guard let map = item.mapValue else { throw .cborUnexpectedType }
        self.init(map)
    }

    func contains(_ key: Int) -> Bool { map[key] != nil }

    func item(_ key: Int) -> CBOR? { map[key] }

    func bytes(_ key: Int) throws(CTAP2Status) -> [UInt8]? {
        guard let item = map[key] else { return nil }
        guard let value = item.bytesValue else { throw .cborUnexpectedType }
        return value
    }

    func text(_ key: Int) throws(CTAP2Status) -> String? {
        guard let item = map[key] else { return nil }
        guard let value = item.textValue else { throw .cborUnexpectedType }
        return value
    }

    func unsigned(_ key: Int) throws(CTAP2Status) -> UInt64? {
        guard let item = map[key] else { return nil }
        guard let value = item.unsignedValue else { throw .cborUnexpectedType }
        return value
    }

    func integer(_ key: Int) throws(CTAP2Status) -> Int? {
        guard let item = map[key] else { return nil }
        guard let value = item.intValue else { throw .cborUnexpectedType }
        return value
    }

    func bool(_ key: Int) throws(CTAP2Status) -> Bool? {
        guard let item = map[key] else { return nil }
        guard let value = item.boolValue else { throw .cborUnexpectedType }
        return value
    }

    func nestedMap(_ key: Int) throws(CTAP2Status) -> CBORMap? {
        guard let item = map[key] else { return nil }
        guard let value = item.mapValue else { throw .cborUnexpectedType }
        return value
    }

    func array(_ key: Int) throws(CTAP2Status) -> [CBOR]? {
        guard let item = map[key] else { return nil }
        guard let value = item.arrayValue else { throw .cborUnexpectedType }
        return value
    }

    func required<T>(_ value: T?) throws(CTAP2Status) -> T {
        guard let value else { throw .missingParameter }
        return value
    }
}

/// A PublicKeyCredentialDescriptor `{"type": "public-key", "id": …}`.
/// Descriptors of other types are skipped, as CTAP says.
func credentialIDs(in descriptors: [CBOR]) throws(CTAP2Status) -> [[UInt8]] {
    var ids: [[UInt8]] = []
    for descriptor in descriptors {
        guard let map = descriptor.mapValue else { throw .cborUnexpectedType }
        guard let type = map["type"], let id = map["id"] else { throw .missingParameter }
        guard let typeName = type.textValue, let idBytes = id.bytesValue else { throw .cborUnexpectedType }
        if typeName == "public-key" { ids.append(idBytes) }
    }
    return ids
}

/// A user entity map: id required (at most 64 bytes), names optional.
struct UserInfo: Equatable {
    var id: [UInt8]
    var name: String?
    var displayName: String?

    init(id: [UInt8], name: String?, displayName: String?) {
        self.id = id
        self.name = name
        self.displayName = displayName
    }

    init(_ item: CBOR) throws(CTAP2Status) {
        guard let map = item.mapValue else { throw .cborUnexpectedType }
        guard let idItem = map["id"] else { throw .missingParameter }
        guard let id = idItem.bytesValue else { throw .cborUnexpectedType }
        guard id.count <= 64 else { throw .invalidLength }
        func optionalText(_ key: String) throws(CTAP2Status) -> String? {
            guard let value = map[key] else { return nil }
            guard let text = value.textValue else { throw .cborUnexpectedType }
            // Stored truncated to 64 bytes, as keys with little flash do.
            return String(decoding: Array(text.utf8.prefix(64)), as: UTF8.self)
        }
        self.init(id: id, name: try optionalText("name"), displayName: try optionalText("displayName"))
    }

    /// The entity returned to the host: names only after user verification.
    func cbor(includingNames: Bool) -> CBOR {
        var map: CBORMap = ["id": .bytes(id)]
        if includingNames {
            if let name { map["name"] = .text(name) }
            if let displayName { map["displayName"] = .text(displayName) }
        }
        return .map(map)
    }
}
