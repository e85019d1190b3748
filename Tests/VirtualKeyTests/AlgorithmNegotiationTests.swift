import CBOR
import Crypto
import FIDO2
import TestSupport
import Testing
import VirtualKey

/// makeCredential's pubKeyCredParams as CTAP 2.1 §6.1 step 3 has it: every
/// entry is checked, and the first `public-key` entry with an algorithm
/// the key has is the credential's, whatever the order of getInfo's list.
@Suite struct AlgorithmNegotiationTests {
    static func parameter(_ alg: CBOR, type: CBOR = "public-key") -> CBOR { .map(["alg": alg, "type": type]) }

    /// Sends makeCredential with `parameters`; the status, and the COSE
    /// `alg` of the credential key on success.
    func makeCredential(_ parameters: [CBOR], on key: VirtualKey) throws -> (status: UInt8, alg: Int?) {
        let host = RawHost(key.connect())
        let request: CBORMap = [
            0x01: .bytes(randomHash()), 0x02: .map(["id": "example.org"]), 0x03: .map(["id": .bytes([1])]),
            0x04: .array(parameters),
        ]
        let reply = try #require(host.cbor(channel: host.allocateChannel(), [0x01] + CBOR.map(request).encoded()))
        guard reply.status == CTAP2Status.success.rawValue else { return (reply.status, nil) }
        let response = try #require(try CBOR.decode(reply.body).mapValue)
        let authenticatorData = try #require(response[0x02]?.bytesValue)
        let coseKey = try ParsedAuthenticatorData(authenticatorData).credentialPublicKey?.mapValue
        return (reply.status, coseKey?[3]?.intValue)
    }

    @Test func theRelyingPartysFirstSupportedEntryWins() throws {
        let key = try makeKey()
        #expect(try makeCredential([Self.parameter(-8), Self.parameter(-7)], on: key).alg == -8)
        #expect(try makeCredential([Self.parameter(-7), Self.parameter(-8)], on: key).alg == -7)
        #expect(try makeCredential([Self.parameter(-257), Self.parameter(-35), Self.parameter(-8)], on: key).alg == -8)
        #expect(try makeCredential([Self.parameter(-8, type: "other"), Self.parameter(-7)], on: key).alg == -7)
        let reordered = try makeKey { $0.algorithms = [.edDSA, .es256] }
        #expect(try makeCredential([Self.parameter(-7), Self.parameter(-8)], on: reordered).alg == -7)
    }

    @Test func entriesAfterTheChosenOneAreStillChecked() throws {
        let key = try makeKey()
        let missing = try makeCredential([Self.parameter(-7), .map(["type": "public-key"])], on: key)
        #expect(missing.status == CTAP2Status.missingParameter.rawValue)
        let wrongType = try makeCredential([Self.parameter(-8), Self.parameter("ES256")], on: key)
        #expect(wrongType.status == CTAP2Status.cborUnexpectedType.rawValue)
    }

    @Test func aRestrictedKeyAnswersUnsupportedAlgorithm() throws {
        let key = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "algorithms=es256"))
        #expect(try makeCredential([Self.parameter(-8)], on: key).status == CTAP2Status.unsupportedAlgorithm.rawValue)
        #expect(try makeCredential([Self.parameter(-8), Self.parameter(-7)], on: key).alg == -7)
        let edOnly = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "algorithms=eddsa"))
        #expect(try makeCredential([Self.parameter(-7)], on: edOnly).status == CTAP2Status.unsupportedAlgorithm.rawValue)
    }
}
