import CBOR
import Crypto
import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// hmac-secret inputs libfido2 never sends (it checks salt lengths itself),
/// built by hand with PIN/UV auth protocol 1 (CTAP 2.1 §6.5.6: AES-256-CBC
/// with a zero IV under SHA-256 of the ECDH x-coordinate, a 16-byte
/// HMAC-SHA-256 tag), and answered as CTAP 2.1 §12.5 requires.
@Suite struct HMACSecretInputTests {
    let key: VirtualKey
    let host: RawHost
    let channel: UInt32
    let credentialID: [UInt8]

    init() throws {
        key = try makeKey()
        var registration = registrationRequest()
        registration.hmacSecret = true
        credentialID = try key.openDevice().makeCredential(registration).credentialID
        host = RawHost(key.connect())
        channel = host.allocateChannel()
    }

    /// Protocol 1's shared secret with the key, and the platform's public key.
    func agree(protocol number: Int = 1) throws -> (shared: [UInt8], platform: CBOR) {
        let reply = try #require(host.cbor(channel: channel, [0x06] + CBOR.map([0x01: .int(number), 0x02: 0x02]).encoded()))
        try #require(reply.status == 0)
        let cose = try #require(try CBOR.decode(reply.body).mapValue?[0x01]?.mapValue)
        let keyX = try #require(cose[-2]?.bytesValue), keyY = try #require(cose[-3]?.bytesValue)
        let platform = try P256.PrivateKey()
        let z = try platform.sharedSecret(with: try P256.PublicKey(x: keyX, y: keyY))
        let platformCOSE: CBOR = .map([1: 2, 3: -25, -1: 1, -2: .bytes(platform.publicKey.x), -3: .bytes(platform.publicKey.y)])
        return (SHA256.hash(z), platformCOSE)
    }

    /// An hmac-secret input for `salt`, and the shared secret to decrypt the output with.
    func input(salt: [UInt8], protocolMember: Int? = nil) throws -> (input: CBOR, shared: [UInt8]) {
        let (shared, platform) = try agree()
        let saltEnc = try AES256.cbcEncrypt(salt, key: shared, iv: [UInt8](repeating: 0, count: 16))
        let saltAuth = Array(HMACSHA256.authenticationCode(for: saltEnc, key: shared).prefix(16))
        var input: CBORMap = [1: platform, 2: .bytes(saltEnc), 3: .bytes(saltAuth)]
        if let protocolMember { input[4] = .int(protocolMember) }
        return (.map(input), shared)
    }

    /// getAssertion with an hmac-secret input whose plaintext salt is `salt`.
    func getAssertion(salt: [UInt8], protocolMember: Int? = nil) throws -> (status: UInt8, body: [UInt8]) {
        let input = try input(salt: salt, protocolMember: protocolMember).input
        let request: CBORMap = [
            0x01: "example.org", 0x02: .bytes(randomHash()),
            0x03: [.map(["id": .bytes(credentialID), "type": "public-key"])],
            0x04: .map(["hmac-secret": input]),
        ]
        return try #require(host.cbor(channel: channel, [0x02] + CBOR.map(request).encoded()))
    }

    @Test func thirtyTwoAndSixtyFourByteSaltsAreAnswered() throws {
        for length in [32, 64] {
            let reply = try getAssertion(salt: length == 32 ? randomHash() : randomHash() + randomHash(), protocolMember: 1)
            #expect(reply.status == 0, "salt of \(length) bytes")
        }
        #expect(try getAssertion(salt: randomHash()).status == 0, "protocol 1 is the default when 0x04 is absent")
    }

    @Test(arguments: [16, 48, 80]) func otherSaltLengthsAreRefused(length: Int) throws {
        let salt = [UInt8](repeating: 0x5A, count: length)
        #expect(try getAssertion(salt: salt, protocolMember: 1).status == CTAP2Status.invalidParameter.rawValue)
    }

    /// CTAP 2.2 hmac-secret-mc: makeCredential returns the outputs a later
    /// getAssertion (here libfido2's, on protocol 2) gives for the same salts.
    @Test func hmacSecretAtRegistrationEqualsTheLaterOutputs() throws {
        let salts = randomHash() + randomHash()
        let (input, shared) = try input(salt: salts, protocolMember: 1)
        let request: CBORMap = [
            0x01: .bytes(randomHash()), 0x02: .map(["id": "example.org"]), 0x03: .map(["id": .bytes([9])]),
            0x04: [.map(["alg": -7, "type": "public-key"])],
            0x06: .map(["hmac-secret": true, "hmac-secret-mc": input]),
        ]
        let reply = try #require(host.cbor(channel: channel, [0x01] + CBOR.map(request).encoded()))
        try #require(reply.status == 0)
        let authenticatorData = try #require(try CBOR.decode(reply.body).mapValue?[0x02]?.bytesValue)
        let parsed = try ParsedAuthenticatorData(authenticatorData)
        #expect(parsed.extensions["hmac-secret"] == true)
        let encrypted = try #require(parsed.extensions["hmac-secret-mc"]?.bytesValue)
        let outputs = try AES256.cbcDecrypt(encrypted, key: shared, iv: [UInt8](repeating: 0, count: 16))
        #expect(outputs.count == 64)

        var later = assertionRequest(allow: [try #require(parsed.credentialID)])
        later.hmacSalt = salts
        #expect(try key.openDevice().getAssertion(later).statement(at: 0).hmacSecret == outputs)

        // Without hmac-secret in the same request there is nothing to derive from.
        var alone = request
        alone[0x06] = .map(["hmac-secret-mc": try self.input(salt: salts).input])
        let ignored = try #require(host.cbor(channel: channel, [0x01] + CBOR.map(alone).encoded()))
        try #require(ignored.status == 0)
        let plain = try ParsedAuthenticatorData(try #require(try CBOR.decode(ignored.body).mapValue?[0x02]?.bytesValue))
        #expect(plain.extensions["hmac-secret-mc"] == nil)
    }

    @Test func aProtocolTheKeyDoesNotOfferIsRefused() throws {
        let onlyTwo = try makeKey { $0.pinUVAuthProtocols = [2] }
        let host = RawHost(onlyTwo.connect())
        let channel = host.allocateChannel()
        let reply = host.cbor(channel: channel, [0x06] + CBOR.map([0x01: 1, 0x02: 0x02]).encoded())
        #expect(reply?.status == CTAP2Status.invalidParameter.rawValue)
        let info = try #require(host.cbor(channel: channel, [0x04]))
        #expect(try CBOR.decode(info.body).mapValue?[0x06] == [2])
    }
}
