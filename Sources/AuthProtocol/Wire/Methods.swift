/// The method names of the protocol (authkeyd-protocol(7), METHODS) as
/// strings, for callers that send or match them; `ClientMethod` and
/// `DaemonNotification` are the typed lists they come from.
public enum Method {
    // Client → daemon.
    public static let hello = ClientMethod.hello.rawValue
    public static let listAuthenticators = ClientMethod.listAuthenticators.rawValue
    public static let authenticatorInfo = ClientMethod.authenticatorInfo.rawValue
    public static let watchAuthenticators = ClientMethod.watchAuthenticators.rawValue
    public static let selectAuthenticator = ClientMethod.selectAuthenticator.rawValue
    public static let cancelOperation = ClientMethod.cancelOperation.rawValue
    public static let createCredential = ClientMethod.createCredential.rawValue
    public static let getCredential = ClientMethod.getCredential.rawValue
    public static let listRegistrations = ClientMethod.listRegistrations.rawValue
    public static let renameRegistration = ClientMethod.renameRegistration.rawValue
    public static let deleteRegistration = ClientMethod.deleteRegistration.rawValue
    public static let registerAgent = ClientMethod.registerAgent.rawValue
    public static let unregisterAgent = ClientMethod.unregisterAgent.rawValue

    // Daemon → client notifications.
    public static let authenticatorAdded = DaemonNotification.authenticatorAdded.rawValue
    public static let authenticatorRemoved = DaemonNotification.authenticatorRemoved.rawValue
    public static let authenticatorChanged = DaemonNotification.authenticatorChanged.rawValue
    public static let operationStatus = DaemonNotification.operationStatus.rawValue
    public static let agentReplaced = DaemonNotification.agentReplaced.rawValue
    public static let operationCancelled = DaemonNotification.operationCancelled.rawValue
    public static let operationFinished = DaemonNotification.operationFinished.rawValue
    public static let agentCallback = DaemonNotification.agentCallback.rawValue
    public static let shuttingDown = DaemonNotification.shuttingDown.rawValue

    /// Every method a client may call.
    public static let clientMethods = ClientMethod.allCases.map(\.rawValue)

    /// Every notification the daemon sends.
    public static let notifications = DaemonNotification.allCases.map(\.rawValue)
}

/// The protocol version this build speaks (`hello`'s `protocol`).
public let protocolVersion = 1

/// hello: `{protocol, client, ui}` → `{protocol, daemon, capabilities, …}`.
public struct HelloParams: Codable, Sendable, Equatable {
    public var `protocol`: Int?
    public var client: String?
    /// The prompts this client answers, by their names
    /// (`Prompt.Kind.rawValue`: the method without `ui.`); nil (absent)
    /// means all of them.
    public var ui: [String]?

    public init(protocol: Int? = protocolVersion, client: String? = nil, ui: [String]? = nil) {
        self.protocol = `protocol`
        self.client = client
        self.ui = ui
    }
}

public struct HelloResult: Codable, Sendable, Equatable {
    public var `protocol`: Int
    public var daemon: String
    public var capabilities: [String]
    /// Who the daemon sees: the uid from SO_PEERCRED.
    public var uid: Int
    /// Whether that user may manage keys (PIN, reset, credentials).
    public var canManage: Bool

    public init(protocol: Int, daemon: String, capabilities: [String], uid: Int, canManage: Bool) {
        self.protocol = `protocol`
        self.daemon = daemon
        self.capabilities = capabilities
        self.uid = uid
        self.canManage = canManage
    }
}

/// Params naming one authenticator: `{authenticator: ID}`.
public struct AuthenticatorParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public init(authenticator: String) { self.authenticator = authenticator }
}

/// `authenticators.select`: `{timeout?}` (milliseconds) → `{authenticator}`.
public struct SelectParams: Codable, Sendable, Equatable {
    public var timeout: Int?
    public init(timeout: Int? = nil) { self.timeout = timeout }
}

/// `{authenticator: Authenticator}`: select's result and the watch notifications.
public struct AuthenticatorEvent: Codable, Sendable, Equatable {
    public var authenticator: Authenticator
    public init(authenticator: Authenticator) { self.authenticator = authenticator }
}

public struct AuthenticatorList: Codable, Sendable, Equatable {
    public var authenticators: [Authenticator]
    public init(authenticators: [Authenticator]) { self.authenticators = authenticators }
}

/// `operation.cancel`: `{id}` of the client's own request in flight.
public struct CancelParams: Codable, Sendable, Equatable {
    public var id: JSONValue
    public init(id: JSONValue) { self.id = id }
}

/// The program holding a key (`operation.status` `busy`): its pid, and its
/// command where the daemon can read it.
public struct Holder: Codable, Sendable, Equatable, CustomStringConvertible {
    public var pid: Int
    public var command: String?
    public init(pid: Int, command: String?) {
        self.pid = pid
        self.command = command
    }

    /// "fido2-token (pid 4242)", or "pid 4242" without a command: as every
    /// client names the holder.
    public var description: String { command.map { "\($0) (pid \(pid))" } ?? "pid \(pid)" }
}

/// `operation.status` notification.
public struct OperationStatus: Codable, Sendable, Equatable {
    public var request: JSONValue
    public var status: Status
    public var authenticator: String?
    /// For `sampleCaptured`: fingerprint samples still to take, and how the
    /// last one went (CTAP's lastEnrollSampleStatus; 0 is good).
    public var remainingSamples: Int?
    public var sampleStatus: Int?
    /// For `busy`: the program holding the key, where the kernel says.
    public var holder: Holder?
    /// To an agent only: the operation the status is about, with its
    /// requester, so that the agent can say who waits for a touch.
    public var operation: OperationInfo?

    public enum Status: String, Codable, Sendable {
        /// Waiting behind another of the daemon's requests for the same key.
        case queued
        /// Waiting for another program to let go of the key.
        case busy
        case processing
        case waitingForTouch
        case waitingForUv
        case selectingByTouch
        case sampleCaptured
    }

    public init(
        request: JSONValue, status: Status, authenticator: String? = nil, remainingSamples: Int? = nil, sampleStatus: Int? = nil,
        holder: Holder? = nil, operation: OperationInfo? = nil
    ) {
        self.operation = operation
        self.holder = holder
        self.request = request
        self.status = status
        self.authenticator = authenticator
        self.remainingSamples = remainingSamples
        self.sampleStatus = sampleStatus
    }
}

/// `daemon.shuttingDown`: `{reason: "shuttingDown", idle?}`, the last line
/// before the daemon closes a connection as it stops.
public struct ShuttingDown: Codable, Sendable, Equatable {
    public var reason: ErrorReason
    /// True when it exits because it had nothing to do (`exit-idle`): an
    /// agent with a callback is called back when it is needed again.
    public var idle: Bool?

    public init(reason: ErrorReason = .shuttingDown, idle: Bool? = nil) {
        self.reason = reason
        self.idle = idle
    }
}
