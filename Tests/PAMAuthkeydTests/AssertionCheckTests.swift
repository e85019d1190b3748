import Crypto
import PAMAuthFile
import PAMAuthkeyd
import Testing

/// The module's own check of the daemon's answer: a made-up or replayed
/// answer, another relying party's, or one without the flags the line
/// demands is refused; only a signature by the enrolled key over this
/// attempt's clientDataHash passes.
@Suite struct AssertionCheckTests {
    static let relyingParty = "pam://host"
    static let id: [UInt8] = Array(1...32)

    struct Signer {
        let credential: EnrolledCredential
        let sign: ([UInt8]) throws -> [UInt8]
    }

    static func es256(options: EnrolledCredential.Options = .init(presence: true)) throws -> Signer {
        let key = try P256.PrivateKey()
        return Signer(
            credential: EnrolledCredential(keyHandle: .id(id), publicKey: key.publicKey.x + key.publicKey.y, algorithm: .es256, options: options),
            sign: { try key.signature(for: $0) })
    }

    static func eddsa() throws -> Signer {
        let key = try Ed25519.PrivateKey()
        return Signer(
            credential: EnrolledCredential(keyHandle: .resident, publicKey: key.publicKey.rawRepresentation, algorithm: .eddsa, options: .init()),
            sign: { try key.signature(for: $0) })
    }

    static func answer(by signer: Signer, flags: UInt8 = 0x01, relyingParty: String = relyingParty, over hash: [UInt8], id: [UInt8] = id) throws -> AssertionCheck.Answer {
        let data = SHA256.hash(Array(relyingParty.utf8)) + [flags, 0, 0, 0, 9]
        return AssertionCheck.Answer(credentialID: id, authenticatorData: data, signature: try signer.sign(data + hash))
    }

    static func check(_ answer: AssertionCheck.Answer, _ signer: Signer, hash: [UInt8], requirements: Requirements? = nil) throws {
        try AssertionCheck.verify(
            answer, against: signer.credential, relyingParty: relyingParty, clientDataHash: hash,
            requirements: requirements ?? Requirements(signer.credential.options, ModuleOptions(arguments: [])))
    }

    @Test func aSignatureByTheEnrolledKeyOverThisAttemptsHashPasses() throws {
        let hash = secureRandomBytes(32)
        for signer in [try Self.es256(), try Self.eddsa()] {
            try Self.check(try Self.answer(by: signer, over: hash), signer, hash: hash)
        }
    }

    @Test func anAnswerReplayedFromAnEarlierAttemptIsRefused() throws {
        let signer = try Self.es256()
        let earlier = try Self.answer(by: signer, over: secureRandomBytes(32))
        #expect(throws: AssertionRefusal.self) { try Self.check(earlier, signer, hash: secureRandomBytes(32)) }
    }

    @Test func aSignatureByAnotherKeyIsRefused() throws {
        let hash = secureRandomBytes(32)
        let forged = try Self.answer(by: try Self.es256(), over: hash)
        #expect(throws: AssertionRefusal("the signature does not verify with the enrolled public key")) {
            try Self.check(forged, try Self.es256(), hash: hash)
        }
    }

    @Test func anotherRelyingPartyAnotherCredentialOrMissingFlagsAreRefused() throws {
        let hash = secureRandomBytes(32)
        let signer = try Self.es256(options: .init(presence: true, verification: true))
        #expect(throws: AssertionRefusal.self) { try Self.check(try Self.answer(by: signer, flags: 0x05, relyingParty: "pam://other", over: hash), signer, hash: hash) }
        #expect(throws: AssertionRefusal.self) { try Self.check(try Self.answer(by: signer, flags: 0x05, over: hash, id: [9, 9]), signer, hash: hash) }
        #expect(throws: AssertionRefusal("the key did not verify the user (UV flag clear)")) {
            try Self.check(try Self.answer(by: signer, flags: 0x01, over: hash), signer, hash: hash)
        }
        #expect(throws: AssertionRefusal("the key did not confirm the user's presence (UP flag clear)")) {
            try Self.check(try Self.answer(by: signer, flags: 0x04, over: hash), signer, hash: hash)
        }
        try Self.check(try Self.answer(by: signer, flags: 0x05, over: hash), signer, hash: hash)
    }

    @Test func theModulesOptionsCombineWithTheLinesAsInPamU2F() {
        let none = EnrolledCredential.Options(), presence = EnrolledCredential.Options(presence: true)
        #expect(Requirements(presence, ModuleOptions(arguments: ["userpresence=0"])).presence == .required, "=0 cannot lift what the line asks")
        #expect(Requirements(none, ModuleOptions(arguments: ["userpresence=0"])).presence == .off)
        #expect(Requirements(none, ModuleOptions(arguments: ["userpresence=1"])).presence == .required)
        #expect(Requirements(none, ModuleOptions(arguments: [])).presence == .unset)
        #expect(Requirements(EnrolledCredential.Options(pin: true), ModuleOptions(arguments: [])).verifiesUser)
        #expect(Requirements(none, ModuleOptions(arguments: ["userverification=1"])).verifiesUser)
        #expect(!Requirements(none, ModuleOptions(arguments: [])).verifiesUser)
    }
}
