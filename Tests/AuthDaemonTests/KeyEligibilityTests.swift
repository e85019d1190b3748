import AuthClient
import AuthProtocol
@testable import AuthDaemon
import BrokerTestSupport
import TestSupport
import Testing

/// The one step of key choice that says which keys can serve a request,
/// and, when none can, the one reason (the messages clients see).
@Suite(.timeLimit(.minutes(2))) struct KeyEligibilityTests {
    static let refusal = RPCError(.unsupported, "registering: residentKey \"required\": the key speaks only U2F (CTAP1)")

    @Test func withNoKeyPresentNoneIsEligibleAndNoReasonIsGiven() throws {
        let everything = try KeyRequirements(
            u2fRefusal: Self.refusal, largeBlob: Self.largeBlobRequired(), algorithms: AlgorithmChoice([.init(alg: -8)]))
        #expect(try everything.eligible([]).isEmpty, "the choice itself says noAuthenticator")
    }

    @Test func largeBlobsRequiredLeaveOnlyTheKeysThatStoreThem() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Plain Key,largeblobs=off", "--virtual-key", "name=Blob Key"])
        let keys = await daemon.broker.orderedKeys
        let requirements = KeyRequirements(largeBlob: try Self.largeBlobRequired())
        #expect(try requirements.eligible(keys).map(\.product) == ["Blob Key"])
        let plain = try #require(keys.first)
        #expect(Self.reason(try requirements.check(plain))?.contains("the key Plain Key does not store large blobs") == true)
        #expect(Self.reason(try requirements.eligible([plain]))?.contains("no key present stores large blobs") == true)
        #expect(try KeyRequirements().eligible(keys).count == 2, "without the requirement both serve")
    }

    @Test func onlyKeysThatSignWithAnOfferedAlgorithmAreEligible() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=ES only,algorithms=es256", "--virtual-key", "name=Both"])
        let keys = await daemon.broker.orderedKeys
        let edDSA = KeyRequirements(algorithms: try AlgorithmChoice([.init(alg: -8)]))
        #expect(try edDSA.eligible(keys).map(\.product) == ["Both"])
        let message = Self.reason(try edDSA.eligible([keys[0]]))
        #expect(message?.contains("EdDSA (-8)") == true && message?.contains("v1 \"ES only\" has ES256 (-7)") == true, "\(String(describing: message))")
        #expect(Self.reason(try edDSA.check(keys[0]))?.contains("which no key present signs with: v1 \"ES only\"") == true)
        let either = KeyRequirements(algorithms: try AlgorithmChoice([.init(alg: -7), .init(alg: -8)]))
        #expect(try either.eligible(keys).count == 2)
    }

    @Test func aU2FKeyThatWouldRefuseIsLeftOutBesideAFIDO2Key() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=FIDO2 Key", "--virtual-key", "name=U2F Key,ctap=u2f"])
        let keys = await daemon.broker.orderedKeys
        let refusing = KeyRequirements(u2fRefusal: Self.refusal)
        #expect(try refusing.eligible(keys).map(\.product) == ["FIDO2 Key"])
        #expect(try KeyRequirements().eligible(keys).count == 2, "what U2F can do, both keys are offered for")
        #expect(Self.reason(try refusing.eligible([keys[1]])) == Self.refusal.message, "with only U2F keys: the refusal")
        #expect(Self.reason(try refusing.check(keys[1])) == Self.refusal.message, "a U2F key named in the request")
    }

    @Test func withOnlyU2FKeysTheOtherReasonsComeFirst() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=U2F Key,ctap=u2f"])
        let keys = await daemon.broker.orderedKeys
        let blob = KeyRequirements(u2fRefusal: Self.refusal, largeBlob: try Self.largeBlobRequired())
        #expect(Self.reason(try blob.eligible(keys))?.contains("no key present stores large blobs") == true)
        let edDSA = KeyRequirements(u2fRefusal: Self.refusal, algorithms: try AlgorithmChoice([.init(alg: -8)]))
        #expect(Self.reason(try edDSA.eligible(keys))?.contains("which no key present signs with") == true)
    }

    /// Two U2F keys and a request neither can serve: refused with the
    /// reason, and nobody is asked to pick a key that must fail.
    @Test func aRequestNoKeyCanServeIsRefusedWithoutAskingWhichKey() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=U2F A,ctap=u2f", "--virtual-key", "name=U2F B,ctap=u2f"])
        let client = try daemon.client()
        let ui = ScriptedUI(choice: .authenticator(id: "v1"))
        client.setUI(ui)
        await expectReason(.unsupported) { try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required)) }
        await expectReason(.unsupported) { try await client.getCredential(WebAuthnFixtures.getParams()) }
        #expect(ui.offeredKeys.isEmpty, "offered: \(ui.offeredKeys)")
        // What both can do, the user picks between them.
        _ = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(ui.offeredKeys.last?.map(\.id) == ["v1", "v2"])
    }

    /// A listing of credentials that names no key: only keys with
    /// credential management and a PIN set can serve it.
    @Test func aListingOfCredentialsLeavesOnlyTheKeysWithAPIN() async throws {
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=No PIN", "--virtual-key", "name=With PIN,pin=1234", "--virtual-key", "name=U2F Key,ctap=u2f",
        ])
        let keys = await daemon.broker.orderedKeys
        let listing = KeyRequirements(listsCredentials: true)
        #expect(try listing.eligible(keys).map(\.product) == ["With PIN"])
        #expect(Self.reason(try listing.eligible([keys[0], keys[2]]))?.contains("v1 \"No PIN\" has none; set one (authctl pin set v1)") == true)
        #expect(Self.reason(try listing.eligible([keys[2]]))?.contains("none offers credential management") == true)
        #expect(Self.reason(try listing.check(keys[0])) != nil && Self.reason(try listing.check(keys[1])) == nil)
    }

    static func largeBlobRequired() throws -> LargeBlobSupport? {
        try LargeBlobSupport(LargeBlobInputs(support: "required"), residentKey: .required)
    }

    /// The message of the error `body` throws, nil when it throws none.
    static func reason<T>(_ body: @autoclosure () throws(RPCError) -> T) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.message
        }
    }
}
