import CBOR
import Crypto
import FuzzTargets
import TestSupport
import Testing
import VirtualKey

/// authenticatorLargeBlobs (CTAP 2.1 §6.10) as a host speaks it, with the
/// requests libfido2 never sends: a token without `lbw`, a bad integrity
/// hash, fragments out of order, sizes over the limits.
@Suite struct LargeBlobConformanceTests {
    static let pin: [UInt8] = Array("1234".utf8)
    let key: VirtualKey
    let host: RawHost
    let channel: UInt32

    init() throws { try self.init { $0.initialPIN = "1234" } }

    init(_ configure: (inout VirtualKeyConfiguration) -> Void) throws {
        key = try makeKey(configure)
        host = RawHost(key.connect())
        channel = host.allocateChannel()
    }

    func send(_ command: UInt8, _ parameters: CBORMap) throws -> (status: UInt8, body: CBORMap) {
        let reply = try #require(host.cbor(channel: channel, [command] + CBOR.map(parameters).encoded()))
        guard !reply.body.isEmpty else { return (reply.status, [:]) }
        let body = try #require(try CBOR.decode(reply.body).mapValue)
        return (reply.status, body)
    }

    /// A pinUvAuthToken for the PIN with `permissions`, and the protocol it speaks.
    func token(permissions: UInt64, version: Int = 2) throws -> [UInt8] {
        let keyAgreement = try send(0x06, [1: .int(version), 2: 2]).body[1]
        let agreement = try #require(PlatformPIN(version: version, keyAgreement: keyAgreement))
        let reply = try send(0x06, [
            1: .int(version), 2: 9, 3: agreement.coseKey, 6: .bytes(agreement.pinHashEncrypted(Self.pin)),
            9: .unsigned(permissions),
        ])
        #expect(reply.status == CTAP2Status.success.rawValue)
        let encrypted = try #require(reply.body[2]?.bytesValue)
        return try #require(agreement.decrypt(encrypted))
    }

    /// One set fragment, authenticated with `token` as §6.10 says.
    func set(_ fragment: [UInt8], offset: Int, length: Int?, token: [UInt8]?, version: Int = 2) throws -> UInt8 {
        var parameters: CBORMap = [0x02: .bytes(fragment), 0x03: .int(offset)]
        if let length { parameters[0x04] = .int(length) }
        if let token {
            let message =
                [UInt8](repeating: 0xFF, count: 32) + [0x0C, 0x00] + withUnsafeBytes(of: UInt32(offset).littleEndian) { [UInt8]($0) }
                + SHA256.hash(fragment)
            parameters[0x05] = .bytes(PlatformPIN.authenticate(message, key: token, version: version))
            parameters[0x06] = .int(version)
        }
        return try send(0x0C, parameters).status
    }

    func readAll() throws -> [UInt8] {
        let reply = try send(0x0C, [0x01: 1024, 0x03: 0])
        #expect(reply.status == CTAP2Status.success.rawValue)
        return try #require(reply.body[1]?.bytesValue)
    }

    /// A CBOR array serialized with its truncated SHA-256.
    static func serialized(_ array: CBOR) -> [UInt8] {
        let body = array.encoded()
        return body + SHA256.hash(body).prefix(16)
    }

    static let lbw: UInt64 = 0x10

    @Test func aFreshKeyHoldsTheEmptyArrayAndSaysSoInGetInfo() throws {
        #expect(try readAll() == [0x80] + SHA256.hash([0x80]).prefix(16))
        #expect(try readAll() == [0x80, 0x76, 0xBE, 0x8B, 0x52, 0x8D, 0x00, 0x75, 0xF7, 0xAA, 0xE9, 0x8D, 0x6F, 0xA5, 0x7A, 0x6D, 0x3C])
        let info = try send(0x04, [:]).body
        #expect(info[0x04]?.mapValue?["largeBlobs"] == true)
        #expect(info[0x02]?.arrayValue?.contains("largeBlobKey") == true)
        #expect(info[0x0B] == 1024)
    }

    @Test func readsFollowOffsetAndLengthRules() throws {
        #expect(try send(0x0C, [0x01: 10]).status == CTAP2Status.invalidParameter.rawValue, "no offset")
        #expect(try send(0x0C, [0x03: 0]).status == CTAP2Status.invalidParameter.rawValue, "neither get nor set")
        #expect(try send(0x0C, [0x01: 10, 0x02: .bytes([1]), 0x03: 0]).status == CTAP2Status.invalidParameter.rawValue)
        #expect(try send(0x0C, [0x01: 10, 0x03: 0, 0x04: 17]).status == CTAP2Status.invalidParameter.rawValue)
        #expect(try send(0x0C, [0x01: 10, 0x03: 0, 0x06: 2]).status == CTAP2Status.invalidParameter.rawValue)
        #expect(try send(0x0C, [0x01: .int(7609 - 63), 0x03: 0]).status == CTAP2Status.invalidLength.rawValue, "over maxMsgSize - 64")
        #expect(try send(0x0C, [0x01: 10, 0x03: 18]).status == CTAP2Status.invalidParameter.rawValue, "past the end")
        let tail = try send(0x0C, [0x01: 10, 0x03: 12])
        #expect(tail.status == 0 && tail.body[1]?.bytesValue == Array(SHA256.hash([0x80]).prefix(16).suffix(5)))
        #expect(try send(0x0C, [0x01: 10, 0x03: 17]).body[1]?.bytesValue == [], "at the end: empty")
    }

    @Test func aWriteInFragmentsNeedsAnLbwToken() throws {
        let array = Self.serialized([.map([1: .bytes([UInt8](repeating: 7, count: 40)), 2: .bytes([UInt8](repeating: 1, count: 12)), 3: 40])])
        let first = Array(array.prefix(30)), rest = Array(array.dropFirst(30))
        #expect(try set(first, offset: 0, length: array.count, token: nil) == CTAP2Status.pinUvAuthTokenRequired.rawValue)
        let credentialManagement = try token(permissions: 0x04)
        #expect(
            try set(first, offset: 0, length: array.count, token: credentialManagement) == CTAP2Status.pinAuthInvalid.rawValue,
            "a token without lbw")
        let writer = try token(permissions: Self.lbw)
        #expect(try set(first, offset: 0, length: nil, token: writer) == CTAP2Status.invalidParameter.rawValue, "offset 0 without length")
        #expect(try set(first, offset: 0, length: array.count, token: writer) == 0)
        #expect(try readAll() == LargeBlobConformanceTests.serialized([]), "nothing changes before the last fragment")
        #expect(try set(rest, offset: 31, length: nil, token: writer) == CTAP2Status.invalidSequence.rawValue)
        #expect(try set(rest, offset: 30, length: 5, token: writer) == CTAP2Status.invalidParameter.rawValue)
        #expect(try set(rest + [0], offset: 30, length: nil, token: writer) == CTAP2Status.invalidParameter.rawValue, "past length")
        let mac = try token(permissions: Self.lbw)  // a new token: the old one is gone
        #expect(try set(rest, offset: 30, length: nil, token: writer) == CTAP2Status.pinAuthInvalid.rawValue)
        #expect(try set(rest, offset: 30, length: nil, token: mac) == 0)
        #expect(try readAll() == array)

        // Protocol 1 signs the same message.
        let one = try token(permissions: Self.lbw, version: 1)
        #expect(try set(Self.serialized([]), offset: 0, length: 17, token: one, version: 1) == 0)
        #expect(try readAll() == Self.serialized([]))
    }

    /// §6.10.2 asks for pinUvAuthParam only of a key protected by some
    /// form of user verification (or with alwaysUv): one with neither PIN
    /// nor fingerprint takes the fragments without it, and still checks
    /// the integrity hash.
    @Test func aKeyWithoutUserVerificationTakesAWriteWithoutAToken() throws {
        let bare = try LargeBlobConformanceTests { $0.fingerprintSensor = false }
        let array = Self.serialized([.map([1: .bytes([UInt8](repeating: 7, count: 40)), 2: .bytes([UInt8](repeating: 1, count: 12)), 3: 40])])
        let first = Array(array.prefix(30)), rest = Array(array.dropFirst(30))
        #expect(try bare.set(first, offset: 0, length: array.count, token: nil) == 0)
        #expect(try bare.set(rest, offset: 30, length: nil, token: nil) == 0)
        #expect(try bare.readAll() == array)
        var corrupt = Self.serialized([1, 2, 3])
        corrupt[corrupt.count - 1] ^= 0xFF
        #expect(try bare.set(corrupt, offset: 0, length: corrupt.count, token: nil) == CTAP2Status.integrityFailure.rawValue)
        #expect(try bare.readAll() == array)
    }

    @Test func theIntegrityHashAndTheSizeLimitAreChecked() throws {
        let writer = try token(permissions: Self.lbw)
        var corrupt = Self.serialized([1, 2, 3])
        corrupt[corrupt.count - 1] ^= 0xFF
        #expect(try set(corrupt, offset: 0, length: corrupt.count, token: writer) == CTAP2Status.integrityFailure.rawValue)
        #expect(try readAll() == Self.serialized([]))
        #expect(try set([0x80], offset: 0, length: 16, token: writer) == CTAP2Status.invalidParameter.rawValue, "under 17 bytes")
        #expect(try set([0x80], offset: 0, length: 1025, token: writer) == CTAP2Status.largeBlobStorageFull.rawValue)

        // Exactly maxSerializedLargeBlobArray fits.
        let filler = CBOR.array([.bytes([UInt8](repeating: 0xAB, count: 1024 - 16 - 4))])
        let full = Self.serialized(filler)
        #expect(full.count == 1024)
        #expect(try set(full, offset: 0, length: 1024, token: writer) == 0)
        #expect(try readAll() == full)
    }

    @Test func aKeyWithoutLargeBlobsRefusesTheCommandAndThePermission() throws {
        let plain = try makeKey { $0.initialPIN = "1234"; $0.largeBlobArrayLimit = 0 }
        let plainHost = RawHost(plain.connect())
        let plainChannel = plainHost.allocateChannel()
        #expect(plainHost.cbor(channel: plainChannel, [0x0C] + CBOR.map([0x01: 10, 0x03: 0]).encoded())?.status
            == CTAP2Status.invalidCommand.rawValue)
        let infoReply = try #require(plainHost.cbor(channel: plainChannel, [0x04]))
        let info = try CBOR.decode(infoReply.body).mapValue
        #expect(info?[0x04]?.mapValue?["largeBlobs"] == nil)
        #expect(info?[0x0B] == nil)
        let agreementReply = try #require(plainHost.cbor(channel: plainChannel, [0x06] + CBOR.map([1: 2, 2: 2]).encoded()))
        let agreement = try #require(PlatformPIN(version: 2, keyAgreement: try CBOR.decode(agreementReply.body).mapValue?[1]))
        let reply = plainHost.cbor(
            channel: plainChannel,
            [0x06] + CBOR.map([1: 2, 2: 9, 3: agreement.coseKey, 6: .bytes(agreement.pinHashEncrypted(Self.pin)), 9: .unsigned(Self.lbw)])
                .encoded())
        #expect(reply?.status == CTAP2Status.unauthorizedPermission.rawValue)
    }

    @Test func largeBlobKeyOnlyForDiscoverableCredentials() throws {
        let open = try makeKey()
        let openHost = RawHost(open.connect())
        let openChannel = openHost.allocateChannel()
        func makeCredential(_ extensions: CBORMap, rk: Bool) throws -> (status: UInt8, body: CBORMap) {
            let request: CBORMap = [
                0x01: .bytes(randomHash()), 0x02: .map(["id": "example.org"]), 0x03: .map(["id": .bytes([1])]),
                0x04: [.map(["alg": -7, "type": "public-key"])], 0x06: .map(extensions), 0x07: .map(["rk": .bool(rk)]),
            ]
            let reply = try #require(openHost.cbor(channel: openChannel, [0x01] + CBOR.map(request).encoded()))
            guard !reply.body.isEmpty else { return (reply.status, [:]) }
            return (reply.status, try #require(try CBOR.decode(reply.body).mapValue))
        }
        #expect(try makeCredential(["largeBlobKey": true], rk: false).status == CTAP2Status.invalidOption.rawValue)
        #expect(try makeCredential(["largeBlobKey": false], rk: true).status == CTAP2Status.invalidOption.rawValue)
        let made = try makeCredential(["largeBlobKey": true], rk: true)
        #expect(made.status == 0)
        let largeBlobKey = try #require(made.body[0x05]?.bytesValue)
        #expect(largeBlobKey.count == 32)
        let authData = try #require(made.body[0x02]?.bytesValue)
        #expect(authData[32] & 0x80 == 0, "no extension outputs in authenticator data")

        let assertion: CBORMap = [0x01: "example.org", 0x02: .bytes(randomHash()), 0x04: .map(["largeBlobKey": true])]
        let reply = try #require(openHost.cbor(channel: openChannel, [0x02] + CBOR.map(assertion).encoded()))
        #expect(reply.status == 0)
        #expect(try CBOR.decode(reply.body).mapValue?[0x07]?.bytesValue == largeBlobKey)
    }
}
