import AuthClient
@testable import AuthDaemon
import AuthProtocol
import BrokerTestSupport
import Foundation
import Glibc
import SystemKit
import TestSupport
import Testing

/// The registration file: its versions read back, the current one written
/// (atomically, mode 0600), and a write that fails reported, not dropped.
@Suite(.timeLimit(.minutes(2))) struct RegistrationStoreTests {
    /// A file exactly as authkeyd wrote it before the file had a version
    /// (version 1: the wire's `RegistrationList` as it was), byte for byte:
    /// two records, one with every member, one from before algorithms were
    /// negotiated, with the optional members absent.
    static let version1File = Array(
        #"{"registrations":[{"id":"q1Vr6kHY0bXz8mLwHgQbZ5WfT0vZc2l0S3ZhbHVl","rpId":"example.com","rpName":"Example","user":{"id":"YWxpY2UtaWQ","name":"alice","displayName":"Alice Liddell"},"aaguid":"ecb8b7f4-1f2a-4d3b-9c5e-0a1b2c3d4e5f","authenticatorProduct":"YubiKey 5 NFC","transport":"usb","friendlyName":"Blue key","residentKey":true,"createdAt":1714560000,"lastUsedAt":1714563600,"signCount":42,"publicKeyAlgorithm":-7},{"id":"Zm9vYmFyYmF6","rpId":"login.example.org","user":{"id":"AAEC_w","name":"bob@example.org","displayName":"Bob \"B\" Ø"},"aaguid":"00000000-0000-0000-0000-000000000000","authenticatorProduct":"authkeyd Virtual Key","transport":"virtual","residentKey":false,"createdAt":1700000000,"signCount":0}]}"#
            .utf8) + [0x0A]

    /// What `version1File` holds.
    static let version1Registrations = [
        Registration(
            id: "q1Vr6kHY0bXz8mLwHgQbZ5WfT0vZc2l0S3ZhbHVl", rpId: "example.com", rpName: "Example",
            user: .init(id: Base64URLBytes(Array("alice-id".utf8)), name: "alice", displayName: "Alice Liddell"),
            aaguid: "ecb8b7f4-1f2a-4d3b-9c5e-0a1b2c3d4e5f", authenticatorProduct: "YubiKey 5 NFC", transport: .usb,
            friendlyName: "Blue key", residentKey: true, createdAt: 1_714_560_000, lastUsedAt: 1_714_563_600, signCount: 42,
            publicKeyAlgorithm: -7),
        Registration(
            id: "Zm9vYmFyYmF6", rpId: "login.example.org", rpName: nil,
            user: .init(id: Base64URLBytes([0, 1, 2, 255]), name: "bob@example.org", displayName: "Bob \"B\" Ø"),
            aaguid: "00000000-0000-0000-0000-000000000000", authenticatorProduct: "authkeyd Virtual Key", transport: .virtual,
            friendlyName: nil, residentKey: false, createdAt: 1_700_000_000, lastUsedAt: nil, signCount: 0),
    ]

    static func file(of daemon: InProcessBroker) -> String { daemon.directory.file("registrations/\(getuid()).json") }

    @Test func everyVersionReadsBackAndTheCurrentOneIsWritten() throws {
        #expect(try RegistrationFile.decode(Self.version1File) == Self.version1Registrations)
        let written = try RegistrationFile.encode(Self.version1Registrations)
        let json = try JSONParser().parse(written)
        #expect(json["version"] == .integer(Int64(RegistrationFile.currentVersion)))
        #expect(written.last == 0x0A)
        #expect(try RegistrationFile.decode(written) == Self.version1Registrations)
    }

    @Test func aFileThatIsNoRegistrationFileIsUnreadable() {
        for bad in [#"{"version":"2","registrations":[]}"#, #"{"version":0,"registrations":[]}"#, #"{"version":2}"#, "[]", "{"] {
            #expect(throws: RegistrationFile.ReadError.self, "\(bad)") { try RegistrationFile.decode(Array(bad.utf8)) }
        }
    }

    /// The daemon serves a version 1 file as it is, and its first write
    /// replaces it with the current version, mode 0600, nothing else changed.
    @Test func aVersion1FileIsServedAndRewrittenInTheCurrentVersion() async throws {
        let daemon = try await InProcessBroker([])
        let path = Self.file(of: daemon)
        try Data(Self.version1File).write(to: URL(fileURLWithPath: path))
        let client = try daemon.client()
        #expect(try await client.listRegistrations() == Self.version1Registrations)

        let renamed = try await client.renameRegistration(id: "Zm9vYmFyYmF6", to: "Spare")
        #expect(renamed.friendlyName == "Spare")
        var expected = Self.version1Registrations
        expected[1].friendlyName = "Spare"
        let bytes = try #require(try AtomicFile.read(path))
        #expect(try JSONParser().parse(bytes)["version"] == .integer(Int64(RegistrationFile.currentVersion)))
        #expect(try RegistrationFile.decode(bytes) == expected)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try await client.listRegistrations() == expected)
    }

    /// A file from a newer authkeyd is neither read as empty nor kept as
    /// `.corrupt`: it stays as it is, and the store says why it cannot serve it.
    @Test func aFileOfALaterVersionIsLeftAsItIs() async throws {
        let daemon = try await InProcessBroker([])
        let path = Self.file(of: daemon)
        let newer = Array(#"{"version":99,"registrations":[{"something":"else"}]}"#.utf8)
        try Data(newer).write(to: URL(fileURLWithPath: path))
        let client = try daemon.client()
        do {
            _ = try await client.listRegistrations()
            Issue.record("a file of version 99 was listed")
        } catch {
            #expect(error.reason == .internalError)
            #expect("\(error)".contains("format version 99"), "\(error)")
        }
        #expect(try AtomicFile.read(path) == newer)
        #expect(!FileManager.default.fileExists(atPath: path + ".corrupt"))
    }

    /// Concurrent renames are written in the order they came, on the
    /// store's thread: the last one asked for is on disk and in memory.
    @Test func writesAreMadeInTheOrderTheyWereAskedFor() async throws {
        let daemon = try await InProcessBroker([])
        let path = Self.file(of: daemon)
        try Data(Self.version1File).write(to: URL(fileURLWithPath: path))
        let raw = try daemon.rawClient()
        let names = (1...12).map { "name \($0)" }
        for (index, name) in names.enumerated() {
            raw.request(index + 1, Method.renameRegistration, ["id": "q1Vr6kHY0bXz8mLwHgQbZ5WfT0vZc2l0S3ZhbHVl", "friendlyName": .string(name)])
        }
        var answered: [Int64: String] = [:]
        while answered.count < names.count, let reply = raw.readReply() {
            answered[reply["id"]?.integerValue ?? 0] = reply["result"]?["friendlyName"]?.stringValue
        }
        #expect(answered == Dictionary(uniqueKeysWithValues: names.enumerated().map { (Int64($0.offset + 1), $0.element) }))
        let onDisk = try RegistrationFile.decode(try #require(try AtomicFile.read(path)))
        #expect(onDisk.first?.friendlyName == names.last)
        #expect(try await daemon.client().listRegistrations().first?.friendlyName == names.last)
    }

    /// A write that fails is reported: a rename is refused and not made,
    /// and sign counts that cannot be written at shutdown are logged with
    /// what that means. (Root writes a read-only directory, so the write is
    /// made to fail by a directory where its temporary file goes.)
    @Test func aWriteThatFailsIsReportedAndItsChangeNotMade() async throws {
        let log = LogRecord()
        let daemon = try await InProcessBroker(["--virtual-key", "name=Blue"], log: log)
        let client = try daemon.client()
        client.setUI(ScriptedUI(name: "Blue key"))
        let created = try await client.createCredential(WebAuthnFixtures.createParams())
        let registration = try #require(created.registration)
        #expect(registration.friendlyName == "Blue key")

        try FileSystem.makeDirectory(Self.file(of: daemon) + ".tmp.\(getpid())", mode: 0o700, intermediates: false)
        do {
            _ = try await client.renameRegistration(id: registration.id, to: "Renamed")
            Issue.record("a rename that could not be written succeeded")
        } catch {
            #expect(error.reason == .internalError, "\(error)")
        }
        #expect(try await client.listRegistrations().map(\.friendlyName) == ["Blue key"], "the rename was not written, so not made")

        _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: [registration.id]))
        await daemon.broker.shutDown()
        #expect(log.text.contains("registrations of uid \(getuid()) changed since "), "\(log.text)")
        #expect(log.text.contains("are not on disk: open(\(Self.file(of: daemon)).tmp.\(getpid())"), "\(log.text)")
        #expect(log.text.contains("lost with this exit"), "\(log.text)")
    }
}
