import Crypto
import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// The U2F personality (`ctap=u2f`) by hand: CTAPHID_MSG carrying ISO
/// 7816-4 APDUs (FIDO U2F Raw Message Formats v1.2) in the short and
/// extended encodings, each reply's status word and bytes checked, the
/// signatures verified with the key's own public keys.
@Suite struct U2FMessageTests {
    let key: VirtualKey
    let host: RawHost
    let channel: UInt32
    let application = SHA256.hash(Array("example.org".utf8))

    init() throws {
        key = try makeKey { $0.ctap = .u2f }
        host = RawHost(key.connect())
        channel = host.allocateChannel()
    }

    /// One APDU over CTAPHID_MSG: the response's data and status word.
    func message(_ apdu: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> (data: [UInt8], status: UInt16) {
        host.send(channel: channel, command: .msg, payload: apdu)
        let reply = try #require(host.receiveMessage(), "no reply", sourceLocation: sourceLocation)
        #expect(reply.command == CTAPHIDCommand.msg.rawValue, sourceLocation: sourceLocation)
        try #require(reply.payload.count >= 2, sourceLocation: sourceLocation)
        let status = UInt16(reply.payload[reply.payload.count - 2]) << 8 | UInt16(reply.payload[reply.payload.count - 1])
        return (Array(reply.payload.dropLast(2)), status)
    }

    /// `CLA INS P1 P2 00 Lc1 Lc2 data 00 00`, as libfido2 builds it.
    func extended(_ ins: UInt8, p1: UInt8 = 0, _ data: [UInt8]) -> [UInt8] {
        [0, ins, p1, 0, 0, UInt8(data.count >> 8), UInt8(truncatingIfNeeded: data.count)] + data + [0, 0]
    }

    /// `CLA INS P1 P2 Lc data Le`, short encoding.
    func short(_ ins: UInt8, p1: UInt8 = 0, _ data: [UInt8]) -> [UInt8] {
        [0, ins, p1, 0, UInt8(data.count)] + data + [0]
    }

    struct Registration {
        var publicKey: [UInt8]
        var keyHandle: [UInt8]
        var certificate: [UInt8]
        var signature: [UInt8]
    }

    /// Splits a REGISTER response, finding where the certificate ends from
    /// its DER length.
    func parseRegistration(_ data: [UInt8]) throws -> Registration {
        try #require(data.count > 67 && data[0] == 0x05, "reserved byte 0x05")
        let publicKey = Array(data[1..<66])
        #expect(publicKey[0] == 0x04, "an uncompressed P-256 point")
        let handleLength = Int(data[66])
        let rest = Array(data[(67 + handleLength)...])
        try #require(rest.count > 4 && rest[0] == 0x30)
        let certificateLength: Int
        switch rest[1] {
        case 0x81: certificateLength = 3 + Int(rest[2])
        case 0x82: certificateLength = 4 + (Int(rest[2]) << 8 | Int(rest[3]))
        default: certificateLength = 2 + Int(rest[1])
        }
        try #require(rest.count > certificateLength)
        return Registration(
            publicKey: publicKey, keyHandle: Array(data[67..<(67 + handleLength)]),
            certificate: Array(rest[..<certificateLength]), signature: Array(rest[certificateLength...]))
    }

    func register(challenge: [UInt8] = randomHash(), encoding: (UInt8, UInt8, [UInt8]) -> [UInt8]) throws -> Registration {
        let reply = try message(encoding(0x01, 0x03, challenge + application))
        try #require(reply.status == 0x9000, "REGISTER: \(String(reply.status, radix: 16))")
        let registration = try parseRegistration(reply.data)
        // The attestation signature, with the certificate's key.
        let attestationKey = try CertificateSummary(der: registration.certificate).publicKey
        let signed = [0x00] + application + challenge + registration.keyHandle + registration.publicKey
        #expect(attestationKey.isValidSignature(registration.signature, for: signed))
        #expect(!attestationKey.isValidSignature(registration.signature, for: [0x00] + application + randomHash() + registration.keyHandle + registration.publicKey))
        return registration
    }

    func authenticationData(_ handle: [UInt8], challenge: [UInt8], application: [UInt8]? = nil) -> [UInt8] {
        challenge + (application ?? self.application) + [UInt8(handle.count)] + handle
    }

    // MARK: CTAPHID

    @Test func initOffersNeitherCBORNorHidesMSG() throws {
        host.send(channel: CTAPHID.broadcastChannel, command: .initialize, payload: [1, 2, 3, 4, 5, 6, 7, 8])
        let reply = try #require(host.receiveMessage())
        #expect(reply.payload.count == 17)
        #expect(reply.payload[16] & 0x04 == 0, "no CBOR capability")
        #expect(reply.payload[16] & 0x08 == 0, "NMSG clear: CTAPHID_MSG is served")
        #expect(reply.payload[16] & 0x01 != 0, "wink")
        // CTAPHID_CBOR is an unknown command here; an empty MSG has no APDU.
        host.send(channel: channel, command: .cbor, payload: [0x04])
        let cbor = try #require(host.receiveMessage())
        #expect(cbor.command == CTAPHIDCommand.error.rawValue && cbor.payload == [CTAPHIDError.invalidCommand.rawValue])
        host.sendInitialization(channel: channel, command: CTAPHIDCommand.msg.rawValue, length: 0)
        let empty = try #require(host.receiveMessage())
        #expect(empty.command == CTAPHIDCommand.error.rawValue && empty.payload == [CTAPHIDError.invalidLength.rawValue])
        // PING still echoes.
        host.send(channel: channel, command: .ping, payload: [1, 2, 3])
        #expect(host.receiveMessage()?.payload == [1, 2, 3])
    }

    // MARK: VERSION

    @Test func versionIsU2FV2InEveryEncoding() throws {
        for apdu: [UInt8] in [[0, 3, 0, 0], [0, 3, 0, 0, 0], [0, 3, 0, 0, 0, 0, 0], [0, 3, 0, 0, 0, 1, 0]] {
            let reply = try message(apdu)
            #expect(reply.status == 0x9000, "\(apdu)")
            #expect(reply.data == Array("U2F_V2".utf8), "\(apdu)")
        }
        #expect(try message(extended(0x03, [1])).status == 0x6700, "VERSION takes no data")
    }

    // MARK: REGISTER

    @Test func registerAnswersAKeyHandleACertificateAndASignatureOverBoth() throws {
        let first = try register(encoding: { extended($0, p1: $1, $2) })
        let second = try register(encoding: { short($0, p1: $1, $2) })
        #expect(first.keyHandle.count == 64 && second.keyHandle.count == 64)
        #expect(first.keyHandle != second.keyHandle && first.publicKey != second.publicKey)
        #expect(first.certificate == second.certificate, "one attestation certificate per key")
        #expect(try CertificateSummary(der: first.certificate).subject.contains("OU=Authenticator Attestation"))
        // Without Le, too (case 3S and 3E).
        #expect(try message([0, 1, 0, 0, 64] + randomHash() + application).status == 0x9000)
        #expect(try message([0, 1, 0, 0, 0, 0, 64] + randomHash() + application).status == 0x9000)
    }

    // MARK: AUTHENTICATE

    @Test func authenticateChecksEnforcesOrSkipsPresenceAndSignsWithTheCredentialKey() throws {
        let registration = try register(encoding: { extended($0, p1: $1, $2) })
        let credentialKey = try P256.PublicKey(x962Representation: registration.publicKey)
        let stranger = secureRandomBytes(64)

        // Check-only: "mine" is 0x6985, anything else 0x6A80.
        #expect(try message(extended(0x02, p1: 0x07, authenticationData(registration.keyHandle, challenge: randomHash()))).status == 0x6985)
        #expect(try message(extended(0x02, p1: 0x07, authenticationData(stranger, challenge: randomHash()))).status == 0x6A80)
        let otherSite = SHA256.hash(Array("other.example".utf8))
        #expect(try message(extended(
            0x02, p1: 0x07, authenticationData(registration.keyHandle, challenge: randomHash(), application: otherSite))).status == 0x6A80)
        #expect(try message(extended(0x02, p1: 0x03, authenticationData(stranger, challenge: randomHash()))).status == 0x6A80)

        var counters: [UInt32] = []
        for (control, presence) in [(UInt8(0x03), UInt8(0x01)), (0x08, 0x00), (0x03, 0x01)] {
            let challenge = randomHash()
            let apdu = control == 0x08
                ? short(0x02, p1: control, authenticationData(registration.keyHandle, challenge: challenge))
                : extended(0x02, p1: control, authenticationData(registration.keyHandle, challenge: challenge))
            let reply = try message(apdu)
            try #require(reply.status == 0x9000, "AUTHENTICATE P1 \(control): \(String(reply.status, radix: 16))")
            #expect(reply.data[0] == presence, "user presence byte for P1 \(control)")
            let counter = reply.data[1..<5].reduce(0) { $0 << 8 | UInt32($1) }
            counters.append(counter)
            let signature = Array(reply.data[5...])
            #expect(credentialKey.isValidSignature(signature, for: application + Array(reply.data[0..<5]) + challenge))
            #expect(!credentialKey.isValidSignature(signature, for: application + Array(reply.data[0..<5]) + randomHash()))
        }
        #expect(counters == [counters[0], counters[0] + 1, counters[0] + 2] && counters[0] >= 1)
        #expect(try message(extended(0x02, p1: 0x05, authenticationData(registration.keyHandle, challenge: randomHash()))).status == 0x6A80)
    }

    // MARK: Status words

    @Test func malformedAndUnknownRequestsGetTheirStatusWords() throws {
        #expect(try message([0x80, 0x03, 0, 0]).status == 0x6E00, "CLA other than 0")
        #expect(try message([0, 0x04, 0, 0]).status == 0x6D00, "an instruction U2F does not have")
        #expect(try message([0, 0xC0, 0, 0, 0]).status == 0x6D00)
        #expect(try message([0, 1, 0]).status == 0x6700, "shorter than a header")
        #expect(try message(extended(0x01, Array(randomHash() + application).dropLast())).status == 0x6700, "REGISTER with 63 bytes")
        #expect(try message([0, 1, 0, 0, 0, 0, 64] + randomHash()).status == 0x6700, "Lc says 64, 32 came")
        #expect(try message([0, 1, 0, 0, 64] + randomHash() + application + [0, 0]).status == 0x6700, "short Lc, two bytes too many")
        var inconsistent = authenticationData(secureRandomBytes(64), challenge: randomHash())
        inconsistent[64] = 70
        #expect(try message(extended(0x02, p1: 0x03, inconsistent)).status == 0x6700, "key handle length that is not the rest")
        #expect(try message(extended(0x02, p1: 0x03, randomHash())).status == 0x6700)
        // The key still works for libfido2.
        let device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        try device.getAssertion(assertionRequest(allow: [credential.credentialID])).verify(es256PublicKey: credential.publicKey)
    }

    /// Whatever bytes arrive, each gets a status word, and the key works on.
    @Test func randomAPDUsEachGetAStatusWord() throws {
        let known: Set<UInt16> = [0x9000, 0x6985, 0x6A80, 0x6700, 0x6D00, 0x6E00]
        for round in 0..<300 {
            var apdu = secureRandomBytes(Int.random(in: 1...300))
            // Half of them reach the instructions U2F has.
            if round % 2 == 0, apdu.count > 1 {
                apdu[0] = 0
                apdu[1] = UInt8.random(in: 1...3)
            }
            let reply = try message(apdu)
            #expect(known.contains(reply.status), "\(apdu): \(String(reply.status, radix: 16))")
        }
        let device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        try device.getAssertion(assertionRequest(allow: [credential.credentialID])).verify(es256PublicKey: credential.publicKey)
    }

    // MARK: Presence

    @Test func conditionsAreNotSatisfiedUntilTheUserTouchesAndATouchIsUsedOnce() throws {
        key.presence = .manual
        let request = extended(0x01, randomHash() + application)
        #expect(try message(request).status == 0x6985)
        #expect(try message(request).status == 0x6985)
        key.touch()
        #expect(try message(request).status == 0x9000)
        #expect(try message(request).status == 0x6985, "the touch is used up")
        key.touch()
        let registration = try parseRegistration(try message(request).data)
        let authenticate = extended(0x02, p1: 0x03, authenticationData(registration.keyHandle, challenge: randomHash()))
        #expect(try message(authenticate).status == 0x6985)
        key.touch()
        #expect(try message(authenticate).status == 0x9000)
        // Not enforcing presence needs no touch.
        #expect(try message(extended(0x02, p1: 0x08, authenticationData(registration.keyHandle, challenge: randomHash()))).status == 0x9000)

        key.presence = .never
        #expect(try message(request).status == 0x6985)
        key.presence = .denied
        #expect(try message(request).status == 0x6985, "U2F has no way to say no")
        // A touch now ends that wait; the next one starts afresh.
        key.presence = .immediate
        #expect(try message(request).status == 0x9000)
        key.presence = .after(.milliseconds(300))
        let clock = ContinuousClock()
        let started = clock.now
        var polls = 0
        while try message(request).status == 0x6985 {
            polls += 1
            blockingSleep(.milliseconds(50))
        }
        #expect(clock.now - started >= .milliseconds(300) && polls >= 3)
    }
}
