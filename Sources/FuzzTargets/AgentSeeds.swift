import AuthProtocol

/// Starting inputs for `fuzzAgent`: what authkeyd sends a session agent —
/// each prompt with its requester, statuses, a cancelled and a finished
/// request, another agent taking over — built from the wire types, plus
/// text from a relying party that must not reach the terminal as it is.
enum AgentSeeds {
    static func all() -> [(name: String, input: [UInt8])] {
        var seeds: [(name: String, input: [UInt8])] = []
        for (index, line) in lines().enumerated() {
            seeds.append(("seed-line-\(index)", line.line()))
        }
        // A request's life in one buffer: a status, its PIN prompt, cancelled.
        let life = [lines()[5], lines()[1], lines()[7]].flatMap { $0.line() }
        seeds.append(("seed-cancelled-request", life))
        // Finished, and another request's prompt after it, with the notice racing ahead.
        seeds.append(("seed-finished-then-another", [lines()[8], lines()[9], lines()[2]].flatMap { $0.line() }))
        seeds.append(("seed-replaced", RPCMessage.notification(method: Method.agentReplaced, params: encoded(AgentReplaced(pid: 4242))).line()))
        seeds.append(("seed-malformed", Array(#"{"jsonrpc":"2.0","id":"authkeyd-9","method":"ui.enterPin","params":{"operation":7}}"#.utf8) + [0x0A]
            + Array(#"{"jsonrpc":"2.0","method":"operation.cancelled","params":{"request":[],"reason":"no","message":1}}"#.utf8) + [0x0A]))
        return seeds
    }

    private static func encoded(_ value: some Encodable) -> JSONValue {
        (try? JSONValueEncoder().encode(value)) ?? .null
    }

    private static func prompt(_ number: Int, _ method: String, _ params: some Encodable) -> RPCMessage {
        .request(id: .string("authkeyd-\(number)"), method: method, params: encoded(params))
    }

    private static func lines() -> [RPCMessage] {
        let requester = Requester(pid: 4242, uid: 1000, command: "ssh-keygen", client: "authkeyd-sk/1")
        let signIn = OperationInfo(
            type: .authentication, rpId: "ssh:", userName: "alice", request: "op-1", origin: "ssh:", requester: requester)
        let register = OperationInfo(
            type: .registration, rpId: "example.org", rpName: "Example", userName: "alice", userDisplayName: "Alice", request: "op-2",
            requester: Requester(pid: 7, uid: 1000, command: "python3"))
        let manage = OperationInfo(type: .management, rpId: nil, request: "op-3", action: ManagementMethod.changePin, requester: requester)
        // An RP id and a transaction detail with a terminal escape and a
        // text-direction override: shown escaped, never as they are.
        let hostile = OperationInfo(
            type: .authentication, rpId: "bank.example\u{1B}[2J\u{202E}", request: "op-4",
            requester: Requester(pid: 9, uid: 1000, command: "evil\u{7}\r"))
        let key = Authenticator(
            id: "v1", path: "virtual:1", transport: .virtual, manufacturer: "authkeyd", product: "Virtual Key", vendorId: 0,
            productId: 0, aaguid: "61757468-6b65-7964-2d76-6b65792d3031", name: "Work", pin: true, pinSet: true, uv: true,
            uvSet: false, rk: true, credMgmt: true, bioEnroll: true, alwaysUv: false)
        let user = StoredCredentials.User(id: Base64URLBytes([1]), name: "alice", displayName: "Alice")
        return [
            prompt(1, Prompt.Kind.selectAuthenticator.method, SelectAuthenticatorPrompt(operation: register, authenticators: [key, key])),
            prompt(2, Prompt.Kind.enterPin.method, EnterPinPrompt(operation: signIn, authenticator: key, reason: .required, retries: 8, minLength: 4)),
            prompt(3, Prompt.Kind.enterPin.method, EnterPinPrompt(operation: manage, authenticator: key, reason: .invalid, retries: 2, minLength: nil)),
            prompt(4, Prompt.Kind.confirmTransaction.method, ConfirmTransactionPrompt(operation: hostile, transaction: Transaction(details: ["Pay": "100 EUR\u{1B}]0;x\u{7}"]))),
            prompt(5, Prompt.Kind.describeAuthenticator.method, DescribeAuthenticatorPrompt(operation: register, authenticator: key, credentialId: "AQID", suggestion: "Work")),
            .notification(method: Method.operationStatus, params: encoded(OperationStatus(request: "op-1", status: .waitingForTouch, authenticator: "v1", operation: signIn))),
            prompt(6, Prompt.Kind.selectCredential.method, SelectCredentialPrompt(
                operation: signIn, authenticator: key, credentials: [.init(id: "AQID", user: user, registration: nil), .init(id: "BAUG", user: user, registration: nil)])),
            .notification(method: Method.operationCancelled, params: encoded(OperationCancelled(request: "op-1", reason: .cancelled, message: "ssh-keygen went away"))),
            .notification(method: Method.operationFinished, params: encoded(OperationFinished(request: "op-2", succeeded: false, reason: .pinInvalid, message: "wrong PIN"))),
            .notification(method: Method.operationStatus, params: encoded(OperationStatus(
                request: "op-4", status: .busy, holder: Holder(pid: 77, command: "fido2-token\u{1B}"), operation: hostile))),
            prompt(7, "ui.unknownPrompt", ["x": 1]),
            .response(id: .string("authkeyd-1"), result: .null),
        ]
    }
}
