/// A JSON-RPC 2.0 request id: chosen by whichever side sends the request.
public enum RPCID: Hashable, Sendable, CustomStringConvertible {
    case number(Int64)
    case string(String)

    /// The id a JSON value holds: a number or a string, as JSON-RPC allows;
    /// nil for anything else. The one reading of an id, for messages,
    /// `operation.cancel`'s target and a notification's `request`.
    public init?(json: JSONValue) {
        switch json {
        case .integer(let n): self = .number(n)
        case .string(let s): self = .string(s)
        default: return nil
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let n): return .integer(n)
        case .string(let s): return .string(s)
        }
    }

    public var description: String {
        switch self {
        case .number(let n): return String(n)
        case .string(let s): return "\"\(s)\""
        }
    }
}

/// One JSON-RPC 2.0 message, in either direction.
public enum RPCMessage: Equatable, Sendable {
    case request(id: RPCID, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)
    case response(id: RPCID, result: JSONValue)
    /// An error reply; the id is nil when the request could not be read.
    case errorResponse(id: RPCID?, error: RPCError)

    /// Reads a message from one line of input. A line that is not a valid
    /// message throws the error reply to send back (with the request's id
    /// when it could be read).
    public static func parse(_ line: UnsafeBufferPointer<UInt8>, maxDepth: Int = 64) throws(MalformedMessage) -> RPCMessage {
        let json: JSONValue
        do {
            json = try JSONParser(maxDepth: maxDepth).parse(line)
        } catch {
            throw MalformedMessage(id: nil, error: RPCError(.parseError, "not JSON: \(error)"))
        }
        return try parse(json)
    }

    public static func parse(_ json: JSONValue) throws(MalformedMessage) -> RPCMessage {
        guard case .object(let object) = json else {
            let what = json.arrayValue != nil ? "batches are not supported" : "a message is a JSON object"
            throw MalformedMessage(id: nil, error: RPCError(.invalidRequest, what))
        }
        let id = try readID(object["id"])
        func invalid(_ message: String) -> MalformedMessage {
            MalformedMessage(id: id, error: RPCError(.invalidRequest, message))
        }
        guard object["jsonrpc"] == "2.0" else { throw invalid("\"jsonrpc\" must be \"2.0\"") }
        if let methodValue = object["method"] {
            guard let method = methodValue.stringValue, !method.isEmpty else { throw invalid("\"method\" must be a string") }
            let params = object["params"]
            if let params, params.objectValue == nil && params.arrayValue == nil {
                throw invalid("\"params\" must be an object")
            }
            if object["id"] == nil { return .notification(method: method, params: params) }
            guard let id else { throw invalid("a request's \"id\" must be a string or a number") }
            return .request(id: id, method: method, params: params)
        }
        if let error = object["error"] {
            guard object["result"] == nil, let rpcError = RPCError(json: error) else {
                throw invalid("\"error\" must be an error object, without \"result\"")
            }
            return .errorResponse(id: id, error: rpcError)
        }
        guard let result = object["result"], let id else { throw invalid("neither a request nor a response") }
        return .response(id: id, result: result)
    }

    private static func readID(_ value: JSONValue?) throws(MalformedMessage) -> RPCID? {
        guard let value, value != .null else { return nil }
        guard let id = RPCID(json: value) else {
            throw MalformedMessage(id: nil, error: RPCError(.invalidRequest, "\"id\" must be a string or a number"))
        }
        return id
    }

    public var json: JSONValue {
        var object: JSONObject = ["jsonrpc": "2.0"]
        switch self {
        case .request(let id, let method, let params):
            object["id"] = id.json
            object["method"] = .string(method)
            if let params { object["params"] = params }
        case .notification(let method, let params):
            object["method"] = .string(method)
            if let params { object["params"] = params }
        case .response(let id, let result):
            object["id"] = id.json
            object["result"] = result
        case .errorResponse(let id, let error):
            object["id"] = id?.json ?? .null
            object["error"] = error.json
        }
        return .object(object)
    }

    /// The message as one NDJSON line, newline included.
    public func line() -> [UInt8] {
        var bytes = json.serialized()
        bytes.append(0x0A)
        return bytes
    }

    /// `.response(id:result:).line()` for a result serialized beforehand:
    /// the same bytes, for a reply sent far more often than its result
    /// changes (the daemon's key list), without serializing it each time.
    public static func responseLine(id: RPCID, serializedResult result: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(result.count + 48)
        bytes.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.json.serialize(into: &bytes)
        bytes.append(contentsOf: #","result":"#.utf8)
        bytes.append(contentsOf: result)
        bytes.append(contentsOf: "}\n".utf8)
        return bytes
    }
}

/// A line that is not a usable message, and the error reply it deserves.
public struct MalformedMessage: Error, Sendable {
    public let id: RPCID?
    public let error: RPCError
}
