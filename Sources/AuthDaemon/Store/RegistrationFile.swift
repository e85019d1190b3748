import AuthProtocol
import Glibc
import SystemKit

/// One user's registration file, `<state>/registrations/<uid>.json`: the
/// store's own format, with a version, so that a change to the wire's
/// `Registration` does not change what is on disk (the two meet only in
/// `StoredRegistration`'s conversions).
///
/// - Version 1 (authkeyd before issue 25): `{"registrations": [...]}`,
///   no version member; the records are those of version 2.
/// - Version 2: `{"version": 2, "registrations": [...]}`.
///
/// Every earlier version is read; the current one is written. A file of a
/// later version (a newer authkeyd ran, then this one) is refused, and
/// left as it is: read as empty, its first write would lose what it holds.
struct RegistrationFile: Codable, Equatable {
    static let currentVersion = 2

    var version: Int
    var registrations: [StoredRegistration]

    /// Why a file cannot be read.
    enum ReadError: Error, CustomStringConvertible {
        /// Not JSON, or not a registration file: kept as `.corrupt`.
        case unreadable(String)
        /// Written by a newer authkeyd, in a format this one does not know.
        case newerVersion(Int)

        var description: String {
            switch self {
            case .unreadable(let why): return why
            case .newerVersion(let version):
                return "format version \(version), written by a newer authkeyd (this one reads versions 1 to \(RegistrationFile.currentVersion))"
            }
        }
    }

    /// The file of `uid`'s registrations in `directory`.
    static func path(for uid: uid_t, in directory: String) -> String { "\(directory)/\(uid).json" }

    /// The records a file holds, whichever version wrote it.
    static func decode(_ bytes: [UInt8]) throws(ReadError) -> [Registration] {
        let json: JSONValue
        do { json = try JSONParser().parse(bytes) } catch { throw .unreadable("\(error)") }
        // Version 1 has no version member.
        let version: Int
        switch json["version"] {
        case nil: version = 1
        case .integer(let number)?: version = Int(number)
        case let other?: throw .unreadable("version: expected a number, got \(other.jsonText)")
        }
        guard version >= 1 else { throw .unreadable("version \(version)") }
        guard version <= currentVersion else { throw .newerVersion(version) }
        do {
            // Versions 1 and 2 share their records; a later version whose
            // records differ decodes its predecessors' here, then converts.
            return try JSONValueDecoder().decode(Records.self, from: json).registrations.map { try $0.registration() }
        } catch {
            throw .unreadable("\(error)")
        }
    }

    /// The current version's bytes for `registrations`, newline-ended.
    static func encode(_ registrations: [Registration]) throws(SystemError) -> [UInt8] {
        let file = RegistrationFile(version: currentVersion, registrations: registrations.map(StoredRegistration.init))
        do { return try JSONValueEncoder().encode(file).serialized() + [0x0A] } catch {
            throw SystemError("encode registrations", code: EINVAL)
        }
    }

    /// The records of versions 1 and 2.
    private struct Records: Decodable {
        var registrations: [StoredRegistration]
    }
}

/// A registration as the file keeps it: the members of version 1's
/// records, which were the wire's `Registration` of that time, spelled
/// out here so that they stay what they were.
struct StoredRegistration: Codable, Equatable {
    struct User: Codable, Equatable {
        /// base64url, as version 1 wrote it.
        var id: String
        var name: String
        var displayName: String
    }

    var id: String
    var rpId: String
    var rpName: String?
    var user: User
    var aaguid: String
    var authenticatorProduct: String
    /// `usb`, `virtual`, `socket` or `uhid`.
    var transport: String
    var friendlyName: String?
    var residentKey: Bool
    var createdAt: Int64
    var lastUsedAt: Int64?
    var signCount: UInt32
    /// Absent in records made before authkeyd negotiated algorithms (ES256).
    var publicKeyAlgorithm: Int?

    init(_ registration: Registration) {
        id = registration.id
        rpId = registration.rpId
        rpName = registration.rpName
        user = User(
            id: Base64URL.encode(registration.user.id.bytes), name: registration.user.name,
            displayName: registration.user.displayName)
        aaguid = registration.aaguid
        authenticatorProduct = registration.authenticatorProduct
        transport = registration.transport.rawValue
        friendlyName = registration.friendlyName
        residentKey = registration.residentKey
        createdAt = registration.createdAt
        lastUsedAt = registration.lastUsedAt
        signCount = registration.signCount
        publicKeyAlgorithm = registration.publicKeyAlgorithm
    }

    /// The record as the daemon and the wire use it.
    func registration() throws(RegistrationFile.ReadError) -> Registration {
        guard let userID = Base64URL.decode(user.id) else { throw .unreadable("registration \(id): user.id: expected base64url") }
        guard let transport = Transport(rawValue: transport) else {
            throw .unreadable("registration \(id): transport: no transport \(String(reflecting: transport))")
        }
        return Registration(
            id: id, rpId: rpId, rpName: rpName,
            user: CreateParams.User(id: Base64URLBytes(userID), name: user.name, displayName: user.displayName),
            aaguid: aaguid, authenticatorProduct: authenticatorProduct, transport: transport, friendlyName: friendlyName,
            residentKey: residentKey, createdAt: createdAt, lastUsedAt: lastUsedAt, signCount: signCount,
            publicKeyAlgorithm: publicKeyAlgorithm)
    }
}
