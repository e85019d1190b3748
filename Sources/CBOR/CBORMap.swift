/// A CBOR map that keeps its entries in the order they were decoded or added.
///
/// The order matters only for diagnostics; encoding always writes the CTAP2
/// canonical order. Keys are unique: adding a key that is present replaces
/// its value.
public struct CBORMap: Hashable, Sendable, ExpressibleByDictionaryLiteral {
    public private(set) var entries: [(key: CBOR, value: CBOR)]

    public init() { entries = [] }

    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        entries = []
        for (key, value) in elements { self[key] = value }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var keys: [CBOR] { entries.map(\.key) }

    public subscript(key: CBOR) -> CBOR? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            let index = entries.firstIndex(where: { $0.key == key })
            switch (index, newValue) {
            case (let i?, let value?): entries[i].value = value
            case (let i?, nil): entries.remove(at: i)
            case (nil, let value?): entries.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// The value under an integer key, the common case in CTAP.
    public subscript(key: Int) -> CBOR? {
        get { self[CBOR.int(key)] }
        set { self[CBOR.int(key)] = newValue }
    }

    /// The value under a text key.
    public subscript(key: String) -> CBOR? {
        get { self[CBOR.text(key)] }
        set { self[CBOR.text(key)] = newValue }
    }

    /// Appends without looking for an existing key; the decoder's fast path
    /// after it has checked for duplicates itself.
    mutating func appendUnchecked(_ key: CBOR, _ value: CBOR) {
        entries.append((key, value))
    }

    public static func == (lhs: CBORMap, rhs: CBORMap) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.entries.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent, like equality.
        var combined = 0
        for entry in entries {
            var h = Hasher()
            h.combine(entry.key)
            h.combine(entry.value)
            combined ^= h.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
