import CBOR
import Crypto
import TestSupport
import Testing
import VirtualKey

/// CTAP2 requests libfido2 never sends, answered as CTAP 2.1 §6 and §8
/// prescribe, so that any conforming host can rely on the key.
@Suite struct CTAP2ConformanceTests {
    let key: VirtualKey
    let host: RawHost
    let channel: UInt32

    init() throws {
        key = try makeKey()
        host = RawHost(key.connect())
        channel = host.allocateChannel()
    }

    func status(_ command: UInt8, _ parameters: CBORMap? = nil) -> UInt8? {
        var request = [command]
        if let parameters { request += CBOR.map(parameters).encoded() }
        return host.cbor(channel: channel, request)?.status
    }

    static let rp: CBOR = .map(["id": "example.org"])
    static let user: CBOR = .map(["id": .bytes([1])])
    static let es256: CBOR = [.map(["alg": -7, "type": "public-key"])]

    var makeCredentialBase: CBORMap { [0x01: .bytes(randomHash()), 0x02: Self.rp, 0x03: Self.user, 0x04: Self.es256] }

    @Test func malformedRequests() {
        #expect(status(0x01) == CTAP2Status.missingParameter.rawValue)
        #expect(host.cbor(channel: channel, [0x01, 0xA1, 0x01])?.status == CTAP2Status.invalidCBOR.rawValue)
        #expect(host.cbor(channel: channel, [0x02, 0x82, 0x01, 0x02])?.status == CTAP2Status.cborUnexpectedType.rawValue)
        #expect(status(0x55) == CTAP2Status.invalidCommand.rawValue)
        var wrongType = makeCredentialBase
        wrongType[0x01] = "not bytes"
        #expect(status(0x01, wrongType) == CTAP2Status.cborUnexpectedType.rawValue)
    }

    @Test func makeCredentialOptionsAndAlgorithms() {
        var unsupported = makeCredentialBase
        unsupported[0x04] = [.map(["alg": -257, "type": "public-key"]), .map(["alg": -7, "type": "other"])]
        #expect(status(0x01, unsupported) == CTAP2Status.unsupportedAlgorithm.rawValue)
        var noPresence = makeCredentialBase
        noPresence[0x07] = .map(["up": false])
        #expect(status(0x01, noPresence) == CTAP2Status.invalidOption.rawValue)
        var uvWithoutFinger = makeCredentialBase
        uvWithoutFinger[0x07] = .map(["uv": true])
        #expect(status(0x01, uvWithoutFinger) == CTAP2Status.invalidOption.rawValue)
        var enterprise = makeCredentialBase
        enterprise[0x0A] = 1
        #expect(status(0x01, enterprise) == CTAP2Status.invalidParameter.rawValue)
        var missingProtocol = makeCredentialBase
        missingProtocol[0x08] = .bytes([1, 2, 3])
        #expect(status(0x01, missingProtocol) == CTAP2Status.missingParameter.rawValue)
        missingProtocol[0x09] = 3
        #expect(status(0x01, missingProtocol) == CTAP2Status.invalidParameter.rawValue)
        #expect(status(0x01, makeCredentialBase) == CTAP2Status.success.rawValue)
    }

    @Test func zeroLengthPinUvAuthParamIsATouchProbe() throws {
        var probe = makeCredentialBase
        probe[0x08] = .bytes([])
        probe[0x09] = 2
        #expect(status(0x01, probe) == CTAP2Status.pinNotSet.rawValue)
        let protected = try makeKey { $0.initialPIN = "1234" }
        let protectedHost = RawHost(protected.connect())
        var request = [UInt8(0x01)]
        request += CBOR.map(probe).encoded()
        #expect(protectedHost.cbor(channel: protectedHost.allocateChannel(), request)?.status == CTAP2Status.pinInvalid.rawValue)
    }

    @Test func getAssertionRulesOtherHostsMeet() {
        let base: CBORMap = [0x01: "example.org", 0x02: .bytes(randomHash())]
        var withRK = base
        withRK[0x05] = .map(["rk": true])
        #expect(status(0x02, withRK) == CTAP2Status.unsupportedOption.rawValue)
        #expect(status(0x02, base) == CTAP2Status.noCredentials.rawValue)
        #expect(status(0x08) == CTAP2Status.notAllowed.rawValue, "getNextAssertion with nothing pending")
    }

    @Test func clientPINSubcommands() throws {
        #expect(status(0x06, [0x02: 0x55]) == CTAP2Status.invalidSubcommand.rawValue)
        #expect(status(0x06, [0x01: 9, 0x02: 0x02]) == CTAP2Status.invalidParameter.rawValue)
        #expect(status(0x06, [0x02: 0x01]) == CTAP2Status.pinNotSet.rawValue, "getPINRetries with no PIN set: nothing to count")
        let protected = try makeKey { $0.initialPIN = "1234" }
        let protectedHost = RawHost(protected.connect())
        let retries = try #require(protectedHost.cbor(channel: protectedHost.allocateChannel(), [0x06] + CBOR.map([0x02: 0x01]).encoded()))
        #expect(retries.status == 0)
        #expect(try CBOR.decode(retries.body).mapValue?[0x03] == 8)
        #expect(try CBOR.decode(retries.body).mapValue?[0x04] == false, "powerCycleState")
        let agreement = try #require(host.cbor(channel: channel, [0x06] + CBOR.map([0x01: 2, 0x02: 0x02]).encoded()))
        let coseKey = try #require(try CBOR.decode(agreement.body).mapValue?[0x01]?.mapValue)
        #expect(coseKey[1] == 2 && coseKey[3] == -25 && coseKey[-1] == 1)
        let x = try #require(coseKey[-2]?.bytesValue), y = try #require(coseKey[-3]?.bytesValue)
        _ = try P256.PublicKey(x: x, y: y)
    }

    @Test func resetNeedsATouchAndSelectionIsOne() {
        key.presence = .denied
        #expect(status(0x0B) == CTAP2Status.operationDenied.rawValue)
        #expect(status(0x07) == CTAP2Status.operationDenied.rawValue)
        key.presence = .immediate
        #expect(status(0x0B) == CTAP2Status.success.rawValue)
    }

    @Test func managementWithoutATokenIsRefused() {
        #expect(status(0x0A, [0x01: 0x01]) == CTAP2Status.pinUvAuthTokenRequired.rawValue)
        #expect(status(0x41, [0x01: 0x02]) == CTAP2Status.pinUvAuthTokenRequired.rawValue)
        #expect(status(0x0A, [0x01: 0x03]) == CTAP2Status.notAllowed.rawValue)
        #expect(status(0x09, [0x01: 1, 0x02: 0x04]) == CTAP2Status.pinUvAuthTokenRequired.rawValue)
        #expect(status(0x40, [0x06: true]) == CTAP2Status.success.rawValue)
    }
}
