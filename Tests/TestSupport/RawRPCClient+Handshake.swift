import AuthProtocol

/// The UI handshake over a raw connection: waiting for a prompt or a
/// status, and answering the daemon's requests.
extension RawRPCClient {
    /// Reads messages until one satisfies `condition` and returns it; nil
    /// when the connection closes or `timeout` passes first.
    public func read(timeout: Duration = .seconds(5), until condition: (JSONValue) -> Bool) -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, let message = readMessage(timeout: deadline - ContinuousClock.now) {
            if condition(message) { return message }
        }
        return nil
    }

    /// `read`, for an async test: it holds no thread of Swift's
    /// cooperative pool while it waits (a look of a moment, then a sleep),
    /// so that the broker in process beside it runs on.
    public func next(within timeout: Duration = .seconds(5), until condition: (JSONValue) -> Bool) async -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            while let message = readMessage(timeout: .milliseconds(2)) {
                if condition(message) { return message }
            }
            if closedByPeer { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Answers a request the daemon sent (a prompt) with `result`.
    public func answer(_ request: JSONValue, with result: JSONValue) {
        let id = request["id"].flatMap(RPCID.init(json:)) ?? .string("")
        send(RPCMessage.response(id: id, result: result).line())
    }
}

extension JSONValue {
    /// The method of a request or notification, nil for a reply.
    public var method: String? { self["method"]?.stringValue }
    /// An `operation.status` notification's status.
    public var operationStatus: String? {
        method == Method.operationStatus ? self["params"]?["status"]?.stringValue : nil
    }
    /// A reply's `error.data.reason`.
    public var errorReason: String? { self["error"]?["data"]?["reason"]?.stringValue }
    /// Whether this is the reply to request `id`.
    public func isReply(to id: Int) -> Bool { method == nil && self["id"]?.integerValue == Int64(id) }
}
