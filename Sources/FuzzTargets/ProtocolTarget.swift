import AuthProtocol

/// The daemon's input path, from the bytes a client writes to its socket to
/// typed parameters: `LineFramer` (with the smallest line limit the daemon
/// can be configured with), `RPCMessage.parse` as `Broker.received` calls
/// it, then every wire type the daemon and its clients decode.
///
/// Nothing may crash, and these must hold:
/// - framing is the same whether the bytes come at once or one at a time,
///   and no line is longer than the limit;
/// - the daemon's reply to a malformed line is one valid JSON-RPC line;
/// - whatever parses (JSON, a message, a wire type) serializes to one line
///   and parses back to an equal value.
public func fuzzProtocol(_ data: [UInt8]) {
    let lines = framedLines(data)
    for line in lines {
        checkJSONRoundTrip(line)
        let message: RPCMessage
        do {
            message = try line.withUnsafeBufferPointer { buffer throws(MalformedMessage) in try RPCMessage.parse(buffer) }
        } catch {
            let reply = RPCMessage.errorResponse(id: error.id, error: error.error)
            require(parseLine(reply.line()) == reply, "the error reply to a malformed line reads back differently")
            continue
        }
        require(parseLine(message.line()) == message, "a message reads back differently after serializing")
        switch message {
        case .request(_, _, let params?), .notification(_, let params?): checkWireTypes(params)
        case .response(_, let result): checkWireTypes(result)
        case .errorResponse, .request(_, _, nil), .notification(_, nil): break
        }
    }
}

/// The smallest `max-line-bytes` authkeyd.conf accepts: long lines are
/// reached with short inputs.
let fuzzedLineLimit = 1024

/// Frames `data` twice, whole and one byte at a time, and checks both give
/// the same events; returns the lines.
private func framedLines(_ data: [UInt8]) -> [[UInt8]] {
    enum Event: Equatable {
        case line([UInt8])
        case tooLong
    }
    func record(_ events: inout [Event], _ event: LineFramer.Event) {
        switch event {
        case .line(let line):
            require(line.count <= fuzzedLineLimit, "a line of \(line.count) bytes passed a limit of \(fuzzedLineLimit)")
            require(!line.contains(0x0A), "a line holds a newline")
            events.append(.line(Array(line)))
        case .lineTooLong:
            require(!events.contains(.tooLong), "lineTooLong came twice")
            events.append(.tooLong)
        }
    }
    var whole = LineFramer(maxLineLength: fuzzedLineLimit)
    var wholeEvents: [Event] = []
    whole.feed(data) { record(&wholeEvents, $0) }
    var trickled = LineFramer(maxLineLength: fuzzedLineLimit)
    var trickledEvents: [Event] = []
    for byte in data {
        trickled.feed([byte]) { record(&trickledEvents, $0) }
        require(trickled.bufferedByteCount <= fuzzedLineLimit, "the framer holds more than its limit")
    }
    require(wholeEvents == trickledEvents, "framing depends on how the bytes were split")
    require(whole.isBroken == trickled.isBroken && whole.isBroken == wholeEvents.contains(.tooLong),
            "isBroken disagrees with the events")
    return wholeEvents.compactMap { event in
        if case .line(let line) = event { return line }
        return nil
    }
}

/// Parses one serialized line (its newline included), which must be a message.
private func parseLine(_ bytes: [UInt8]) -> RPCMessage? {
    require(bytes.last == 0x0A && bytes.firstIndex(of: 0x0A) == bytes.count - 1, "a message serialized to more than one line")
    return try? bytes.dropLast().withUnsafeBufferPointer { buffer throws(MalformedMessage) in try RPCMessage.parse(buffer) }
}

private func checkJSONRoundTrip(_ line: [UInt8]) {
    guard let value = try? JSONParser().parse(line) else { return }
    let text = value.serialized()
    require(!text.contains(0x0A), "JSON serialized with a raw newline")
    require((try? JSONParser().parse(text)) == value, "JSON reads back differently after serializing")
}

/// Decodes `json` as every wire type; those it decodes as must encode,
/// serialize and decode back to the same value.
private func checkWireTypes(_ json: JSONValue) {
    for check in wireTypeChecks { check(json) }
}

private func roundTrip<T: Codable & Equatable & Sendable>(_ type: T.Type) -> @Sendable (JSONValue) -> Void {
    { json in
        guard let value = try? JSONValueDecoder().decode(T.self, from: json) else { return }
        let encoded: JSONValue
        do { encoded = try JSONValueEncoder().encode(value) } catch {
            return require(false, "\(T.self) decoded but does not encode: \(error)")
        }
        let reparsed = try? JSONParser().parse(encoded.serialized())
        let again = reparsed.flatMap { try? JSONValueDecoder().decode(T.self, from: $0) }
        require(again == value, "\(T.self) reads back differently after encoding")
    }
}

/// What the daemon decodes from clients (params, prompt replies) and what
/// clients decode from the daemon (results, notifications, prompts).
private let wireTypeChecks: [@Sendable (JSONValue) -> Void] = [
    // Daemon side.
    roundTrip(HelloParams.self), roundTrip(AuthenticatorParams.self), roundTrip(SelectParams.self),
    roundTrip(CancelParams.self), roundTrip(CreateParams.self), roundTrip(GetParams.self),
    roundTrip(RenameRegistrationParams.self), roundTrip(RegistrationIDParams.self), roundTrip(ResetParams.self),
    roundTrip(ListCredentialsParams.self), roundTrip(CredentialParams.self), roundTrip(UpdateUserParams.self),
    roundTrip(EnrollParams.self), roundTrip(FingerprintParams.self), roundTrip(AlwaysUvParams.self),
    roundTrip(MinPinLengthParams.self), roundTrip(PromptReply.self),
    // Client side.
    roundTrip(HelloResult.self), roundTrip(AuthenticatorList.self), roundTrip(AuthenticatorEvent.self),
    roundTrip(AuthenticatorDetails.self), roundTrip(OperationStatus.self), roundTrip(CredentialResult.self),
    roundTrip(RegistrationList.self), roundTrip(RetriesResult.self), roundTrip(StoredCredentials.self),
    roundTrip(FingerprintSensor.self), roundTrip(FingerprintList.self), roundTrip(SelectAuthenticatorPrompt.self),
    roundTrip(EnterPinPrompt.self), roundTrip(ConfirmTransactionPrompt.self), roundTrip(DescribeAuthenticatorPrompt.self),
    roundTrip(SelectCredentialPrompt.self),
]
