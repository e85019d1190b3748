import AuthProtocol
import PAMAuthFile
import Testing

/// pam_u2f's authfile as pamu2fcfg writes it and pam_u2f 1.1 reads it.
@Suite struct AuthFileTests {
    static let handle = Array(0..<64).map { UInt8($0) }
    static let point = [UInt8](repeating: 0xAB, count: 64)
    static var entry: String { "\(Base64.encode(handle)),\(Base64.encode(point)),es256,+presence" }

    static func parse(_ text: String, user: String = "alice", maxDevices: Int = 24) throws -> [EnrolledCredential]? {
        try AuthFile.credentials(of: user, in: Array(text.utf8), maxDevices: maxDevices)
    }

    @Test func aLineOfSeveralCredentialsWithTheirTypesAndOptions() throws {
        let eddsaKey = [UInt8](repeating: 7, count: 32)
        let text = "bob:\(Self.entry)\nalice:\(Self.entry):*,\(Base64.encode(eddsaKey)),eddsa,+verification+pin:\(Base64.encode(Self.handle)),\(Base64.encode(Self.point)),es256,\n"
        let credentials = try #require(try Self.parse(text))
        #expect(credentials.count == 3)
        #expect(credentials[0] == EnrolledCredential(keyHandle: .id(Self.handle), publicKey: Self.point, algorithm: .es256, options: .init(presence: true)))
        #expect(credentials[1] == EnrolledCredential(
            keyHandle: .resident, publicKey: eddsaKey, algorithm: .eddsa, options: .init(verification: true, pin: true)))
        #expect(credentials[2].options == .init(), "pamu2fcfg -P ends the entry with an empty options field")
    }

    @Test func theUsersLastLineWinsAndOtherUsersAreNotRead() throws {
        let other = [UInt8](repeating: 0x11, count: 64)
        let text = "alice:\(Self.entry)\nalicia:garbage\nalice:\(Base64.encode(Self.handle)),\(Base64.encode(other)),es256,+presence"
        #expect(try Self.parse(text)?.map(\.publicKey) == [other], "pam_u2f keeps only the last line for a user")
        #expect(try Self.parse(text, user: "carol") == nil)
        #expect(try Self.parse("Alice:\(Self.entry)") == nil, "user names match exactly")
    }

    @Test func pamU2F10sOldFormat() throws {
        let hex = "04" + Self.point.map { String($0, radix: 16) }.joined()
        let credentials = try #require(try Self.parse("alice:\(Base64URL.encode(Self.handle)),\(hex)"))
        #expect(credentials == [EnrolledCredential(keyHandle: .id(Self.handle), publicKey: Self.point, algorithm: .es256, options: .init(presence: true))])
    }

    @Test func crlfLineEndsAndTheMaximumOfDevices() throws {
        #expect(try Self.parse("alice:\(Self.entry)\r\n")?.count == 1)
        #expect(try Self.parse("alice:\(Self.entry):\(Self.entry):\(Self.entry)", maxDevices: 2)?.count == 2)
    }

    @Test(arguments: [
        ("alice:!!!notbase64,\(Base64.encode(point)),es256,+presence", "the key handle is not base64"),
        ("alice:\(Base64.encode(handle)),\(Base64.encode(point)),ES384,+presence", "unknown key type"),
        ("alice:\(Base64.encode(handle)),\(Base64.encode([1, 2, 3])),es256,", "an es256 public key is 64 bytes, not 3"),
        ("alice:\(Base64.encode(handle))", "no public key"),
        ("alice:\(Base64URL.encode(handle)),0499", "not the hex of an uncompressed P-256 point"),
    ])
    func aMalformedCredentialOfTheUsersLineIsAnErrorThatSaysWhere(_ text: String, _ reason: String) {
        #expect {
            _ = try Self.parse(text)
        } throws: { error in
            let description = (error as? AuthFileError)?.description ?? ""
            return description.hasPrefix("line 1, credential 1: ") && description.contains(reason)
        }
    }

    @Test func aFileOfTenMegabytesIsRefusedBeforeItIsParsed() {
        let huge = [UInt8]("alice:".utf8) + [UInt8](repeating: UInt8(ascii: "A"), count: 10 << 20)
        #expect(throws: AuthFileError.self) { try AuthFile.credentials(of: "alice", in: huge) }
    }

    @Test func addingACredentialJoinsTheUsersLineAsPamu2fcfgNAppends() throws {
        let credential = EnrolledCredential(keyHandle: .resident, publicKey: Self.point, algorithm: .es256, options: .init(presence: true))
        let first = AuthFile.adding(credential, for: "alice", to: Array("bob:\(Self.entry)\n".utf8))
        #expect(String(decoding: first, as: UTF8.self) == "bob:\(Self.entry)\nalice:*,\(Base64.encode(Self.point)),es256,+presence\n")
        let second = AuthFile.adding(credential, for: "alice", to: first)
        #expect(try AuthFile.credentials(of: "alice", in: second)?.count == 2, "one line for alice, two credentials")
        #expect(try AuthFile.credentials(of: "bob", in: second)?.count == 1)
    }

    /// The line a credential joins is the one read as the user's: one that
    /// starts with an empty field (`:alice:…`, which pam_u2f reads as
    /// alice's) once got a new line after it, which then hid its
    /// credentials; a name alone before a CR got a second line.
    @Test func addingJoinsTheLineThatIsReadAsTheUsers() throws {
        let credential = EnrolledCredential(keyHandle: .resident, publicKey: Self.point, algorithm: .es256, options: .init(presence: true))
        let added = credential.authFileEntry
        for (file, expected) in [
            (":alice:\(Self.entry)\n", ":alice:\(Self.entry):\(added)\n"),
            ("alice:\(Self.entry)\n::alice:\(Self.entry)\r\n", "alice:\(Self.entry)\n::alice:\(Self.entry):\(added)\r\n"),
            ("alice\r\nbob:\(Self.entry)\n", "alice:\(added)\r\nbob:\(Self.entry)\n"),
        ] {
            let written = AuthFile.adding(credential, for: "alice", to: Array(file.utf8))
            #expect(String(decoding: written, as: UTF8.self) == expected)
            let before = try Self.parse(file) ?? []
            #expect(try Self.parse(String(decoding: written, as: UTF8.self)) == before + [credential])
        }
    }

    @Test func theLineIsPamu2fcfgsWithoutALineFeed() {
        let credential = EnrolledCredential(keyHandle: .id(Self.handle), publicKey: Self.point, algorithm: .es256, options: .init(presence: true, verification: true, pin: true))
        #expect(AuthFile.line(for: "alice", [credential]) == "alice:\(Base64.encode(Self.handle)),\(Base64.encode(Self.point)),es256,+presence+verification+pin")
    }
}
