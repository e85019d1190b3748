import AuthProtocol

/// A malformed authfile: what is wrong, where, for the log. It never
/// holds a key or a handle, only their position.
public struct AuthFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// pam_u2f's authfile (pam_u2f 1.1, as pamu2fcfg writes it): a line per
/// user, `user:KEYHANDLE,PUBLICKEY,TYPE,OPTIONS[:KEYHANDLE,…]`, standard
/// base64, `*` as the key handle of a discoverable credential; and the
/// older format of pam_u2f 1.0 (`user:KEYHANDLE,HEXKEY`: a web-safe
/// base64 key handle and the hex of an uncompressed P-256 point), whose
/// credentials always asked for presence.
///
/// As pam_u2f reads it: fields split on `:` and `,` with empty ones
/// skipped, the user's last line wins, at most `maxDevices` credentials
/// of it count. Unlike pam_u2f, a malformed credential of the user's line
/// is an error whatever comes after it, a CR before the line feed is
/// dropped, and the file may be at most `maximumSize` bytes.
public enum AuthFile {
    /// Far beyond any real file (a credential is under 400 bytes); a file
    /// past it is refused before it is parsed.
    public static let maximumSize = 1 << 20

    /// The credentials of `user`'s line; nil when the file has no line for them.
    public static func credentials(of user: String, in contents: [UInt8], maxDevices: Int = 24) throws(AuthFileError) -> [EnrolledCredential]? {
        guard contents.count <= maximumSize else {
            throw AuthFileError("it is \(contents.count) bytes, more than the \(maximumSize) an authfile may have")
        }
        var found: (number: Int, fields: [Substring])?
        for (index, rawLine) in contents.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let fields = self.fields(of: rawLine)
            if fields.first.map(String.init) == user { found = (index + 1, Array(fields.dropFirst())) }
        }
        guard let found else { return nil }
        var credentials: [EnrolledCredential] = []
        for (position, entry) in found.fields.prefix(maxDevices).enumerated() {
            do {
                credentials.append(try credential(from: entry))
            } catch {
                throw AuthFileError("line \(found.number), credential \(position + 1): \(error.description)")
            }
        }
        return credentials
    }

    /// A line's fields, as pam_u2f splits them: on `:`, empty ones
    /// skipped (`::alice:…` is alice's line), a CR at the end dropped. The
    /// first is the user's name.
    private static func fields(of line: some Collection<UInt8>) -> [Substring] {
        var text = String(decoding: line, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        return text.split(separator: ":")
    }

    /// The line pamu2fcfg prints for `user`: no line feed after it.
    public static func line(for user: String, _ credentials: [EnrolledCredential]) -> String {
        ([user] + credentials.map(\.authFileEntry)).joined(separator: ":")
    }

    /// `contents` with `credential` added to `user`'s line (the last one,
    /// which is the one that counts, found as `credentials` finds it), or a
    /// new line at the end.
    public static func adding(_ credential: EnrolledCredential, for user: String, to contents: [UInt8]) -> [UInt8] {
        var lines = contents.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if lines.last == [] { lines.removeLast() }
        if let index = lines.lastIndex(where: { fields(of: $0).first.map(String.init) == user }) {
            var line = lines[index]
            let endsWithCR = line.last == 0x0D
            if endsWithCR { line.removeLast() }
            line += Array((":" + credential.authFileEntry).utf8)
            if endsWithCR { line.append(0x0D) }
            lines[index] = line
        } else {
            lines.append(Array(line(for: user, [credential]).utf8))
        }
        return lines.flatMap { $0 + [0x0A] }
    }

    private static func credential(from entry: Substring) throws(AuthFileError) -> EnrolledCredential {
        let fields = entry.split(separator: ",").map(String.init)
        switch fields.count {
        case 0, 1:
            throw AuthFileError("no public key")
        case 2:
            return try oldFormatCredential(keyHandle: fields[0], publicKey: fields[1])
        default:
            guard let algorithm = EnrolledCredential.Algorithm(rawValue: fields[2]) else {
                throw AuthFileError("unknown key type \"\(fields[2].prefix(16))\" (es256, eddsa and rs256 are known)")
            }
            let handle: EnrolledCredential.KeyHandle
            if fields[0] == "*" {
                handle = .resident
            } else {
                guard let bytes = Base64.decode(fields[0]), !bytes.isEmpty else { throw AuthFileError("the key handle is not base64") }
                handle = .id(bytes)
            }
            guard var key = Base64.decode(fields[1]) else { throw AuthFileError("the public key is not base64") }
            // libfido2 takes an ES256 key with its 0x04 prefix too.
            if algorithm == .es256 && key.count == 65 && key.first == 0x04 { key.removeFirst() }
            guard key.count == algorithm.publicKeyByteCount else {
                throw AuthFileError("an \(algorithm.rawValue) public key is \(algorithm.publicKeyByteCount) bytes, not \(key.count)")
            }
            let options = fields.count > 3 ? EnrolledCredential.Options(field: fields[3]) : EnrolledCredential.Options()
            return EnrolledCredential(keyHandle: handle, publicKey: key, algorithm: algorithm, options: options)
        }
    }

    /// pam_u2f 1.0's `KEYHANDLE,HEXKEY`: ES256, presence always.
    private static func oldFormatCredential(keyHandle: String, publicKey: String) throws(AuthFileError) -> EnrolledCredential {
        guard let handle = Base64URL.decode(keyHandle), !handle.isEmpty else { throw AuthFileError("the key handle is not base64") }
        guard let point = Hex.decode(publicKey), point.count == 65, point.first == 0x04 else {
            throw AuthFileError("the public key of an old-format line is not the hex of an uncompressed P-256 point")
        }
        return EnrolledCredential(
            keyHandle: .id(handle), publicKey: Array(point.dropFirst()), algorithm: .es256, options: .init(presence: true))
    }
}
