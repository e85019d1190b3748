import AuthProtocol

/// Starting inputs for `fuzzProtocol`: a client's session with each
/// method and prompt answer, built from the wire types so that they stay
/// what the daemon accepts, plus the malformed lines the daemon must refuse.
enum ProtocolSeeds {
    static func all() -> [(name: String, input: [UInt8])] {
        var seeds: [(name: String, input: [UInt8])] = []
        for (index, message) in messages().enumerated() {
            seeds.append(("seed-message-\(index)", message.line()))
        }
        // A session in one buffer: CRLF, blank lines, a partial last line.
        let session = messages().prefix(4).flatMap { $0.line() }
        seeds.append(("seed-session", Array("\r\n  \n".utf8) + session + Array(#"{"jsonrpc":"2.0","id":9,"#.utf8)))
        for (index, line) in malformed.enumerated() {
            seeds.append(("seed-malformed-\(index)", Array(line.utf8) + [0x0A]))
        }
        seeds.append(("seed-too-long", Array(#"{"jsonrpc":"2.0","id":1,"method":""#.utf8) + [UInt8](repeating: 0x61, count: 1100) + Array("\"}\n".utf8)))
        return seeds
    }

    private static func request(_ id: Int64, _ method: String, _ params: some Encodable) -> RPCMessage {
        .request(id: .number(id), method: method, params: try? JSONValueEncoder().encode(params))
    }

    private static func messages() -> [RPCMessage] {
        let key = AuthenticatorParams(authenticator: "v1")
        var create = CreateParams(
            rp: .init(id: "example.org", name: "Example"),
            user: .init(id: Base64URLBytes([1, 2, 3]), name: "alice", displayName: "Alice"),
            challenge: Base64URLBytes(Array("challenge-challenge".utf8)), pubKeyCredParams: [.init(alg: -7), .init(alg: -257)])
        create.timeout = 30_000
        create.excludeCredentials = [CredentialDescriptor(id: Base64URLBytes([9, 9]), transports: [.usb])]
        create.authenticatorSelection = .init(residentKey: .required, requireResidentKey: true, userVerification: .preferred)
        create.attestation = .direct
        var extensions = CreateExtensions()
        extensions.credProps = true
        extensions.hmacCreateSecret = true
        extensions.credentialProtectionPolicy = "userVerificationOptionalWithCredentialIDList"
        extensions.enforceCredentialProtectionPolicy = false
        extensions.credBlob = Base64URLBytes([7])
        extensions.minPinLength = true
        create.extensions = extensions
        create.origin = "https://example.org"
        create.authenticator = "v1"
        var get = GetParams(challenge: Base64URLBytes([4, 5, 6]), rpId: "example.org")
        get.allowCredentials = [CredentialDescriptor(id: Base64URLBytes([9, 9]))]
        get.userVerification = .required
        var getExtensions = GetExtensions()
        getExtensions.getCredBlob = true
        get.extensions = getExtensions
        get.clientDataHash = Base64URLBytes([UInt8](repeating: 0xAB, count: 32))
        get.transaction = Transaction(details: ["Amount": "100 EUR", "To": "Bob"])
        let user = StoredCredentials.User(id: Base64URLBytes([1]), name: "alice", displayName: "Alice")
        let operation = OperationInfo(type: .registration, rpId: "example.org", rpName: "Example", userName: "alice", request: 1)
        let authenticator = Authenticator(
            id: "v1", path: "virtual:1", transport: .virtual, manufacturer: "authkeyd", product: "Virtual Key", vendorId: 0,
            productId: 0, aaguid: "61757468-6b65-7964-2d76-6b65792d3031", name: "Work", pin: true, pinSet: true, uv: true,
            uvSet: false, rk: true, credMgmt: true, bioEnroll: true, alwaysUv: false)
        return [
            request(1, Method.hello, HelloParams(client: "fuzz/1")),
            .request(id: .number(2), method: Method.listAuthenticators, params: nil),
            request(3, Method.authenticatorInfo, key),
            .request(id: .string("w"), method: Method.watchAuthenticators, params: .object([:])),
            request(4, Method.selectAuthenticator, SelectParams(timeout: 5_000)),
            request(5, Method.createCredential, create),
            request(6, Method.getCredential, get),
            request(7, Method.cancelOperation, CancelParams(id: 5)),
            .request(id: .number(8), method: Method.listRegistrations, params: nil),
            request(9, Method.renameRegistration, RenameRegistrationParams(id: "AQID", friendlyName: "Work key")),
            request(10, Method.deleteRegistration, RegistrationIDParams(id: "AQID")),
            request(11, ManagementMethod.setPin, key),
            request(12, ManagementMethod.reset, ResetParams(authenticator: "v1", confirm: "Virtual Key")),
            request(13, ManagementMethod.listCredentials, ListCredentialsParams(authenticator: "v1", rpId: "example.org")),
            request(14, ManagementMethod.deleteCredential, CredentialParams(authenticator: "v1", credentialId: "AQID")),
            request(15, ManagementMethod.updateCredentialUser, UpdateUserParams(authenticator: "v1", credentialId: "AQID", user: user)),
            request(16, ManagementMethod.enrollFingerprint, EnrollParams(authenticator: "v1", name: "thumb")),
            request(17, ManagementMethod.renameFingerprint, FingerprintParams(authenticator: "v1", templateId: "AQID", name: "index")),
            request(18, ManagementMethod.setAlwaysUv, AlwaysUvParams(authenticator: "v1", enabled: true)),
            request(19, ManagementMethod.setMinPinLength, MinPinLengthParams(authenticator: "v1", length: 6, rpIds: ["example.org"], forceChange: true)),
            // Answers to the daemon's prompts.
            .response(id: .string("authkeyd-1"), result: (try? JSONValueEncoder().encode(PromptReply(action: .proceed, pin: "1234"))) ?? .null),
            .response(id: .string("authkeyd-2"), result: (try? JSONValueEncoder().encode(PromptReply(action: .proceed, authenticator: "v1", touch: true, friendlyName: "Work"))) ?? .null),
            .errorResponse(id: .string("authkeyd-3"), error: RPCError(.cancelled, "the user cancelled", details: ["fido": "FIDO_ERR_PIN_INVALID"])),
            .notification(method: "client.note", params: ["x": [1, 2.5, true, nil]]),
            // What the daemon sends, as a client reads it.
            request(20, Prompt.Kind.enterPin.method, EnterPinPrompt(operation: operation, authenticator: authenticator, reason: .invalid, retries: 7, minLength: 4)),
            request(21, Prompt.Kind.selectAuthenticator.method, SelectAuthenticatorPrompt(operation: operation, authenticators: [authenticator])),
            // The account chooser, and a hello that declares the prompts answered.
            request(22, Method.hello, HelloParams(client: "fuzz/1", ui: ["selectCredential", "enterPin"])),
            request(23, Prompt.Kind.selectCredential.method, SelectCredentialPrompt(operation: operation, authenticator: authenticator, credentials: [.init(id: "AQID", user: user, registration: nil)])),
            .response(id: .string("authkeyd-4"), result: (try? JSONValueEncoder().encode(PromptReply(action: .proceed, credential: "AQID"))) ?? .null),
            .notification(method: Method.operationStatus, params: try? JSONValueEncoder().encode(OperationStatus(request: 5, status: .sampleCaptured, authenticator: "v1", remainingSamples: 2, sampleStatus: 0))),
            .response(id: .number(1), result: (try? JSONValueEncoder().encode(HelloResult(protocol: 1, daemon: "authkeyd/1", capabilities: Method.clientMethods, uid: 1000, canManage: true))) ?? .null),
            .response(id: .number(2), result: (try? JSONValueEncoder().encode(AuthenticatorList(authenticators: [authenticator]))) ?? .null),
            .response(id: .number(13), result: (try? JSONValueEncoder().encode(StoredCredentials(existing: 1, remaining: 24, relyingParties: [.init(id: "example.org", name: nil, credentials: [.init(credentialId: "AQID", user: user, credProtect: 2, registration: nil)])]))) ?? .null),
        ]
    }

    private static let malformed = [
        #"[{"jsonrpc":"2.0","id":1,"method":"hello"}]"#,
        #"{"jsonrpc":"2.0","id":1,"id":2,"method":"hello"}"#,
        #"{"jsonrpc":"1.0","id":1.5e3,"method":"hello"}"#,
        #"{"jsonrpc":"2.0","id":{"a":1},"method":"hello"}"#,
        #"{"jsonrpc":"2.0","id":"\ud83d\ude00\u0000\n","method":"x","params":"no"}"#,
        #"{"jsonrpc":"2.0","id":-9223372036854775808,"result":1e308,"error":null}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"credentials.create","params":{"rp":{"name":"x"},"user":{"id":"@@","name":"","displayName":""},"pubKeyCredParams":[{"type":"public-key","alg":1e20}]}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"credentials.get","params":{"transaction":{"details":{"a":1}}}}"#,
        String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
        "\u{FEFF}{\"a\":\"\\uD800\"} trailing",
        "{\"a\":\"\u{7}\"}",
        "nul\u{0}",
    ]
}
