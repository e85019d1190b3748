/// The one stable word in `error.data.reason` (authkeyd-protocol(7),
/// ERROR REASONS). Clients switch on it; messages are for people and may
/// change.
public enum ErrorReason: String, Codable, Sendable, CaseIterable {
    // Outcomes of operations.
    case cancelled
    case timeout
    case pinRequired
    case pinInvalid
    case pinBlocked
    case uvBlocked
    case noAuthenticator
    case noCredentials
    case credentialExcluded
    case busy
    case permissionDenied
    case invalidParams
    case deviceError
    case unsupported
    case shuttingDown
    /// The key refuses now, though it could later: a reset long after it
    /// was plugged in (CTAP allows resets within seconds of power-up).
    case notAllowed
    /// The key has few PIN attempts left (3 or fewer), and only an
    /// administrator may spend them: another user cannot make it block.
    case pinAttemptsLow
    // JSON-RPC itself.
    case parseError
    case invalidRequest
    case methodNotFound
    case tooLarge
    case internalError

    /// The JSON-RPC error code this reason travels with.
    public var code: Int {
        switch self {
        case .parseError: return -32700
        case .invalidRequest, .tooLarge: return -32600
        case .methodNotFound: return -32601
        case .invalidParams: return -32602
        case .internalError: return -32603
        case .cancelled: return -32001
        case .timeout: return -32002
        case .pinRequired: return -32003
        case .pinInvalid: return -32004
        case .pinBlocked: return -32005
        case .uvBlocked: return -32006
        case .noAuthenticator: return -32007
        case .noCredentials: return -32008
        case .credentialExcluded: return -32009
        case .busy: return -32010
        case .permissionDenied: return -32011
        case .deviceError: return -32012
        case .unsupported: return -32013
        case .shuttingDown: return -32014
        case .notAllowed: return -32015
        case .pinAttemptsLow: return -32016
        }
    }
}

/// A JSON-RPC error object, with authkeyd's `data`: `reason`, and where
/// libfido2 gave one, `fido` (its error name) and other details.
public struct RPCError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var reason: ErrorReason?
    /// Members of `data` besides `reason` (`fido`, `retries`, …).
    public var details: JSONObject

    public init(_ reason: ErrorReason, _ message: String, details: JSONObject = [:]) {
        self.code = reason.code
        self.message = message
        self.reason = reason
        self.details = details
    }

    public init(code: Int, message: String, reason: ErrorReason?, details: JSONObject) {
        self.code = code
        self.message = message
        self.reason = reason
        self.details = details
    }

    public var description: String { message }

    public var json: JSONValue {
        var data = details
        if let reason { data["reason"] = .string(reason.rawValue) }
        var object: JSONObject = ["code": .integer(Int64(code)), "message": .string(message)]
        if !data.isEmpty { object["data"] = .object(data) }
        return .object(object)
    }

    init?(json: JSONValue) {
        guard let object = json.objectValue, let code = object["code"]?.integerValue,
            let message = object["message"]?.stringValue
        else { return nil }
        var details = object["data"]?.objectValue ?? [:]
        let reason = details["reason"]?.stringValue.flatMap(ErrorReason.init(rawValue:))
        details["reason"] = nil
        self.init(code: Int(code), message: message, reason: reason, details: details)
    }
}
