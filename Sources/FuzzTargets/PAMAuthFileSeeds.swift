import AuthProtocol
import PAMAuthFile

/// Starting inputs for `fuzzPAMAuthFile`: files as pamu2fcfg writes them
/// (each key type, resident credentials, every option, several keys and
/// users), pam_u2f 1.0's format, and the malformed lines the reader refuses.
enum PAMAuthFileSeeds {
    static func all() -> [(name: String, input: [UInt8])] {
        let es256 = EnrolledCredential(
            keyHandle: .id(Array(0..<64)), publicKey: [UInt8](repeating: 0x42, count: 64), algorithm: .es256, options: .init(presence: true))
        let eddsa = EnrolledCredential(
            keyHandle: .id(Array(0..<48)), publicKey: [UInt8](repeating: 0x43, count: 32), algorithm: .eddsa,
            options: .init(presence: true, verification: true, pin: true))
        let rs256 = EnrolledCredential(
            keyHandle: .id([7, 7, 7]), publicKey: [UInt8](repeating: 0x44, count: 259), algorithm: .rs256, options: .init())
        let resident = EnrolledCredential(
            keyHandle: .resident, publicKey: [UInt8](repeating: 0x45, count: 64), algorithm: .es256, options: .init(pin: true))
        let oldFormat = "bob:" + Base64URL.encode(Array(0..<32)) + "," + FuzzTrace.hex([0x04] + [UInt8](repeating: 0x46, count: 64), limit: 65)
        let files: [(String, String)] = [
            ("pamu2fcfg", AuthFile.line(for: "alice", [es256]) + "\n"),
            ("every-type", AuthFile.line(for: "alice", [es256, eddsa, rs256, resident]) + "\n"),
            ("users", AuthFile.line(for: "alice", [es256]) + "\n" + AuthFile.line(for: "root", [eddsa, resident]) + "\n"),
            ("crlf-last-wins", AuthFile.line(for: "alice", [es256]) + "\r\n" + AuthFile.line(for: "alice", [rs256]) + "\r\n"),
            ("old-format", oldFormat + "\n" + AuthFile.line(for: "carol", [resident])),
            ("prefix-0x04", "dave:" + Base64.encode([1, 2, 3]) + "," + Base64.encode([0x04] + [UInt8](repeating: 9, count: 64)) + ",es256,+presence\n"),
            ("empty-fields", "erin::" + es256.authFileEntry + ",,\n\nerin\n"),
            ("no-credentials", "frank\nfrank:\n"),
        ]
        let malformed = [
            "alice:AAAA", "alice:AAAA,BBBB,ecdsa,", "alice:!!!!,QUJD,es256,", "alice:*,!!!!,eddsa,+presence",
            "alice:*,QUJD,es256,", "alice:" + Base64URL.encode([1]) + ",04zz", "alice:" + es256.authFileEntry + ":,",
        ]
        return files.map { ("seed-\($0.0)", Array($0.1.utf8)) }
            + malformed.enumerated().map { ("seed-malformed-\($0.offset)", Array(($0.element + "\n").utf8)) }
    }
}
