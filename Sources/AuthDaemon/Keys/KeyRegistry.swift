import AuthProtocol
import VirtualKey

/// The keys the broker serves, and everything kept per key: the order
/// they are listed in, the names users gave them, each key's queue of
/// operations, the keys still coming up, and the in-process virtual keys
/// behind some of them. Broker-confined (a value the actor holds); it
/// decides nothing that waits: an operation does its waiting on the
/// broker (`Operation.acquire`).
struct KeyRegistry {
    /// The keys by id; `order` lists them USB first, then virtual, socket
    /// and UHID keys, each kind in the order its ids were given.
    private var byID: [String: RegisteredKey] = [:]
    private var order: [String] = []
    private var nextNumber: [Transport: Int] = [:]
    /// Keys being brought up, by path: not listed yet, stopped if their
    /// node goes before they are (`Broker.abandonBringUp`).
    var comingUp: [String: DeviceWorker] = [:]
    /// The in-process virtual keys, by key id, with the spec each came from.
    var virtual: [String: (spec: String, key: VirtualKey)] = [:]
    /// Names users gave the present keys (ui.describeAuthenticator), or
    /// that their registrations carry, by key id.
    private var names: [String: String] = [:]
    /// Each key's queue of operations, by key id.
    private var queues: [String: KeyQueue] = [:]
    private var nextQueueToken = 1
    /// `authenticators.list`'s result, encoded and serialized once and kept
    /// until a key comes, goes, is renamed or reports new getInfo: clients
    /// ask for it far more often than it changes.
    private var encodedList: [UInt8]?

    subscript(id: String) -> RegisteredKey? { byID[id] }

    var isEmpty: Bool { byID.isEmpty }

    /// The present keys, in their listed order.
    var ordered: [RegisteredKey] { order.compactMap { byID[$0] } }

    func key(atPath path: String) -> RegisteredKey? {
        byID.values.first { $0.path == path }
    }

    /// The next id for a key of `transport`: u1, u2, … (never reused).
    mutating func reserveID(_ transport: Transport) -> String {
        let number = (nextNumber[transport] ?? 0) + 1
        nextNumber[transport] = number
        return Self.idPrefix(transport) + String(number)
    }

    mutating func insert(_ key: RegisteredKey) {
        byID[key.id] = key
        let place = Self.listPlace(of: key)
        let position = order.firstIndex { Self.listPlace(of: byID[$0]!) > place }
        order.insert(key.id, at: position ?? order.endIndex)
        encodedList = nil
    }

    /// Takes the key out; nil when it was not in service.
    mutating func remove(_ key: RegisteredKey) -> RegisteredKey? {
        guard let removed = byID.removeValue(forKey: key.id) else { return nil }
        order.removeAll { $0 == key.id }
        encodedList = nil
        return removed
    }

    // MARK: Names

    func name(of key: RegisteredKey) -> String? { names[key.id] }

    /// Names the key; false when it had that name already.
    mutating func setName(_ name: String?, of key: RegisteredKey) -> Bool {
        guard names[key.id] != name else { return false }
        names[key.id] = name
        encodedList = nil
        return true
    }

    // MARK: The list clients are sent

    /// The key as clients see it.
    func wire(_ key: RegisteredKey) -> Authenticator {
        key.wire(name: names[key.id])
    }

    /// What a key says of itself changed: the list is encoded again.
    mutating func keyChanged() { encodedList = nil }

    /// The present keys as `authenticators.list` and `.watch` answer,
    /// serialized.
    mutating func list() -> [UInt8] {
        if let encodedList { return encodedList }
        let list = encode(AuthenticatorList(authenticators: ordered.map(wire))).serialized()
        encodedList = list
        return list
    }

    // MARK: Queues

    /// Whether any key is held by an operation.
    var anyInUse: Bool { queues.values.contains { $0.busy } }

    /// Takes the key if nobody holds it.
    mutating func take(_ key: RegisteredKey) -> Bool {
        guard queues[key.id, default: KeyQueue()].busy == false else { return false }
        queues[key.id, default: KeyQueue()].busy = true
        return true
    }

    /// Puts a waiter in line for the key; the token takes it out again.
    mutating func wait(for key: RegisteredKey, _ continuation: CheckedContinuation<Bool, Never>) -> Int {
        let token = nextQueueToken
        nextQueueToken += 1
        queues[key.id, default: KeyQueue()].waiting.append((token, continuation))
        return token
    }

    /// The waiter that leaves the line, if it was still in it.
    mutating func leave(_ keyID: String, token: Int) -> CheckedContinuation<Bool, Never>? {
        guard let index = queues[keyID]?.waiting.firstIndex(where: { $0.token == token }) else { return nil }
        return queues[keyID]!.waiting.remove(at: index).continuation
    }

    /// Lets the key go: the next waiter's, to resume with the key, or nil
    /// when the key is free now.
    mutating func release(_ key: RegisteredKey) -> CheckedContinuation<Bool, Never>? {
        guard var queue = queues[key.id] else { return nil }
        defer { queues[key.id] = queue }
        guard !queue.waiting.isEmpty else {
            queue.busy = false
            return nil
        }
        return queue.waiting.removeFirst().continuation
    }

    // MARK: Ids

    static func idPrefix(_ transport: Transport) -> String {
        switch transport {
        case .usb: return "u"
        case .virtual: return "v"
        case .socket: return "s"
        case .uhid: return "h"
        }
    }

    /// Where a key stands in `authenticators.list`: by kind, then by id.
    private static func listPlace(of key: RegisteredKey) -> (Int, Int) {
        (Transport.allCases.firstIndex(of: key.transport)!, Int(key.id.dropFirst(idPrefix(key.transport).count)) ?? 0)
    }
}

/// One key's queue of operations: it serves one at a time, the others wait
/// in the order they came (authkeyd-protocol(7): `queued`). Every use of a
/// key passes it, so that no call reaches a key another operation holds.
struct KeyQueue {
    var busy = false
    var waiting: [(token: Int, continuation: CheckedContinuation<Bool, Never>)] = []
}
