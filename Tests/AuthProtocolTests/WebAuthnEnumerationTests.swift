import AuthProtocol
import Testing

/// WebAuthn's enumerations on the wire: typed, and as lenient as WebAuthn
/// asks a client to be with a value it does not know.
@Suite struct WebAuthnEnumerationTests {
    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONValueDecoder().decode(type, from: try JSONParser().parse(Array(text.utf8)))
    }

    @Test func knownValuesDecodeAsTheirCases() throws {
        let create = try decode(CreateParams.self, """
            {"rp":{"id":"example.org","name":"E"},"user":{"id":"AQ","name":"a","displayName":"A"},"pubKeyCredParams":[],
             "authenticatorSelection":{"authenticatorAttachment":"cross-platform","residentKey":"preferred","userVerification":"required"},
             "attestation":"enterprise","excludeCredentials":[{"type":"public-key","id":"AQ","transports":["usb","smart-card","internal"]}]}
            """)
        #expect(create.authenticatorSelection?.authenticatorAttachment == .crossPlatform)
        #expect(create.authenticatorSelection?.residentKey == .preferred)
        #expect(create.authenticatorSelection?.userVerification == .required)
        #expect(create.attestation == .enterprise)
        #expect(create.excludeCredentials?.first?.transports == [.usb, .smartCard, .internal])

        let get = try decode(GetParams.self, #"{"rpId":"example.org","userVerification":"discouraged"}"#)
        #expect(get.userVerification == .discouraged)
    }

    /// WebAuthn Level 3 §2.1.1: a client ignores a value it does not
    /// know, so a newer relying party's options still work: the member is
    /// absent (its default applies), an unknown transport is left out.
    @Test func unknownValuesAreIgnoredNotRefused() throws {
        let create = try decode(CreateParams.self, """
            {"rp":{"name":"E"},"user":{"id":"AQ","name":"a","displayName":"A"},"pubKeyCredParams":[],
             "authenticatorSelection":{"authenticatorAttachment":"wrist","residentKey":"mandatory","requireResidentKey":true,"userVerification":"always"},
             "attestation":"notarised","excludeCredentials":[{"type":"public-key","id":"AQ","transports":["carrier-pigeon","nfc"]}]}
            """)
        #expect(create.authenticatorSelection?.authenticatorAttachment == nil)
        #expect(create.authenticatorSelection?.residentKey == nil)
        #expect(create.authenticatorSelection?.requireResidentKey == true)
        #expect(create.authenticatorSelection?.userVerification == nil)
        #expect(create.attestation == nil)
        #expect(create.excludeCredentials?.first?.transports == [.nfc])

        let get = try decode(GetParams.self, #"{"rpId":"example.org","userVerification":"sometimes"}"#)
        #expect(get.userVerification == nil)
    }

    /// Not a string at all is still an error: leniency is for values, not
    /// for types.
    @Test func aValueOfTheWrongTypeIsStillRefused() {
        #expect(throws: (any Error).self) {
            try decode(GetParams.self, #"{"rpId":"example.org","userVerification":3}"#)
        }
        #expect(throws: (any Error).self) {
            try decode(CredentialDescriptor.self, #"{"type":"public-key","id":"AQ","transports":"usb"}"#)
        }
    }

    @Test func encodingWritesWebAuthnsSpelling() throws {
        var params = GetParams(challenge: nil, rpId: "example.org")
        params.userVerification = .required
        params.allowCredentials = [CredentialDescriptor(id: Base64URLBytes([1]), transports: [.smartCard, .hybrid])]
        let value = try JSONValueEncoder().encode(params)
        #expect(value["userVerification"] == "required")
        #expect(value["allowCredentials"]?.arrayValue?.first?["transports"] == ["smart-card", "hybrid"])
        #expect(try decode(GetParams.self, String(decoding: value.serialized(), as: UTF8.self)) == params)
    }
}
