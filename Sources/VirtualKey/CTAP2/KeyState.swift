import CBOR
import Crypto

/// A discoverable credential as the key stores it. The private key is not
/// here: it lives sealed inside `id` (see `SealedCredential`).
struct ResidentCredential: Equatable {
    var id: [UInt8]
    var rpID: String
    var rpName: String?
    var userID: [UInt8]
    var userName: String?
    var userDisplayName: String?
    var protection: UInt8
    /// Creation order, to list the newest first.
    var serial: UInt64
    /// Made with the largeBlobKey extension (the key itself is derived).
    var hasLargeBlobKey = false
}

/// An enrolled (simulated) fingerprint.
struct Enrollment: Equatable {
    var templateID: [UInt8]
    var friendlyName: String?
}

/// Everything a key remembers across power cycles: what a real key keeps in
/// flash. Serialised as CBOR for the optional state file.
struct KeyState: Equatable {
    /// Seals credential ids and derives hmac-secret's CredRandom.
    var masterKey: [UInt8]
    var attestation: AttestationIdentity
    var signCount: UInt32 = 0
    /// LEFT(SHA-256(PIN), 16), and the PIN's length in code points.
    var pinHash: [UInt8]?
    var pinLength = 0
    var pinRetries = KeyState.maxPINRetries
    var uvRetries = KeyState.maxUVRetries
    var minPINLength = KeyState.defaultMinPINLength
    var minPINLengthRPIDs: [String] = []
    var forcePINChange = false
    var alwaysUV = false
    var residentCredentials: [ResidentCredential] = []
    var nextSerial: UInt64 = 1
    var enrollments: [Enrollment] = []
    /// The serialized large-blob array with its hash (authenticatorLargeBlobs).
    var largeBlobArray = LargeBlobArray.initial

    static let maxPINRetries = 8
    static let maxUVRetries = 8
    static let defaultMinPINLength = 4

    var isPINSet: Bool { pinHash != nil }

    /// A factory-fresh key: new master key and attestation identity.
    static func fresh(aaguid: [UInt8], productName: String) throws(CTAP2Status) -> KeyState {
        KeyState(
            masterKey: secureRandomBytes(32),
            attestation: try AttestationIdentity.generate(aaguid: aaguid, productName: productName))
    }

    /// What authenticatorReset leaves: no credentials, no PIN, no
    /// fingerprints, a new master key (so old credential ids die too); the
    /// attestation identity is the device's and stays.
    mutating func reset() {
        self = KeyState(masterKey: secureRandomBytes(32), attestation: attestation, signCount: signCount)
    }
}

// MARK: - CBOR serialisation

extension KeyState {
    func encoded() -> [UInt8] {
        var map: CBORMap = [
            "version": 1,
            "masterKey": .bytes(masterKey),
            "attestation": attestation.cbor,
            "signCount": .unsigned(UInt64(signCount)),
            "pinLength": .int(pinLength),
            "pinRetries": .int(pinRetries),
            "uvRetries": .int(uvRetries),
            "minPINLength": .int(minPINLength),
            "minPINLengthRPIDs": .array(minPINLengthRPIDs.map(CBOR.text)),
            "forcePINChange": .bool(forcePINChange),
            "alwaysUV": .bool(alwaysUV),
            "nextSerial": .unsigned(nextSerial),
            "residentCredentials": .array(residentCredentials.map(\.cbor)),
            "enrollments": .array(enrollments.map(\.cbor)),
        ]
        if let pinHash { map["pinHash"] = .bytes(pinHash) }
        if largeBlobArray != LargeBlobArray.initial { map["largeBlobArray"] = .bytes(largeBlobArray) }
        return CBOR.map(map).encoded()
    }

    init(encoded bytes: [UInt8]) throws(StateFileError) {
        guard let map = (try? CBOR.decode(bytes))?.mapValue, map["version"]?.intValue == 1 else {
            throw StateFileError.unreadable("not a version 1 key state")
        }
        func require<T>(_ value: T?, _ field: String) throws(StateFileError) -> T {
            guard let value else { throw StateFileError.unreadable("missing or invalid \(field)") }
            return value
        }
        masterKey = try require(map["masterKey"]?.bytesValue, "masterKey")
        attestation = try require(map["attestation"].flatMap(AttestationIdentity.init(cbor:)), "attestation")
        signCount = UInt32(truncatingIfNeeded: try require(map["signCount"]?.unsignedValue, "signCount"))
        pinHash = map["pinHash"]?.bytesValue
        pinLength = try require(map["pinLength"]?.intValue, "pinLength")
        pinRetries = try require(map["pinRetries"]?.intValue, "pinRetries")
        uvRetries = try require(map["uvRetries"]?.intValue, "uvRetries")
        minPINLength = try require(map["minPINLength"]?.intValue, "minPINLength")
        minPINLengthRPIDs = try require(map["minPINLengthRPIDs"]?.arrayValue, "minPINLengthRPIDs").compactMap(\.textValue)
        forcePINChange = map["forcePINChange"]?.boolValue ?? false
        alwaysUV = map["alwaysUV"]?.boolValue ?? false
        nextSerial = try require(map["nextSerial"]?.unsignedValue, "nextSerial")
        residentCredentials = try require(map["residentCredentials"]?.arrayValue, "residentCredentials")
            .map { (item) throws(StateFileError) in try require(ResidentCredential(cbor: item), "resident credential") }
        enrollments = try require(map["enrollments"]?.arrayValue, "enrollments")
            .map { (item) throws(StateFileError) in try require(Enrollment(cbor: item), "enrollment") }
        // Absent from state files written before large blobs, and while empty.
        largeBlobArray = map["largeBlobArray"]?.bytesValue ?? LargeBlobArray.initial
        guard masterKey.count == 32 else { throw StateFileError.unreadable("masterKey is not 32 bytes") }
    }
}

extension ResidentCredential {
    var cbor: CBOR {
        var map: CBORMap = [
            "id": .bytes(id), "rpID": .text(rpID), "userID": .bytes(userID),
            "protection": .int(Int(protection)), "serial": .unsigned(serial),
        ]
        if let rpName { map["rpName"] = .text(rpName) }
        if let userName { map["userName"] = .text(userName) }
        if let userDisplayName { map["userDisplayName"] = .text(userDisplayName) }
        if hasLargeBlobKey { map["largeBlobKey"] = true }
        return .map(map)
    }

    init?(cbor: CBOR) {
        guard let map = cbor.mapValue, let id = map["id"]?.bytesValue, let rpID = map["rpID"]?.textValue,
            let userID = map["userID"]?.bytesValue, let protection = map["protection"]?.intValue,
            let serial = map["serial"]?.unsignedValue
        else { return nil }
        self.init(
            id: id, rpID: rpID, rpName: map["rpName"]?.textValue, userID: userID,
            userName: map["userName"]?.textValue, userDisplayName: map["userDisplayName"]?.textValue,
            protection: UInt8(clamping: protection), serial: serial,
            hasLargeBlobKey: map["largeBlobKey"]?.boolValue ?? false)
    }
}

extension Enrollment {
    var cbor: CBOR {
        var map: CBORMap = ["templateID": .bytes(templateID)]
        if let friendlyName { map["friendlyName"] = .text(friendlyName) }
        return .map(map)
    }

    init?(cbor: CBOR) {
        guard let map = cbor.mapValue, let id = map["templateID"]?.bytesValue else { return nil }
        self.init(templateID: id, friendlyName: map["friendlyName"]?.textValue)
    }
}

/// Why a state file could not be used.
public enum StateFileError: Error, CustomStringConvertible, Sendable {
    case unreadable(String)
    case io(String)

    public var description: String {
        switch self {
        case .unreadable(let why): return "virtual key state file is unreadable: \(why)"
        case .io(let why): return "virtual key state file: \(why)"
        }
    }
}
