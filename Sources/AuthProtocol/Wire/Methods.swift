/// The method names of the protocol (PROTOCOL.md), in one place.
public enum Method {
    // Client → daemon.
    public static let hello = "hello"
    public static let listAuthenticators = "authenticators.list"
    public static let authenticatorInfo = "authenticators.info"
    public static let watchAuthenticators = "authenticators.watch"
    public static let selectAuthenticator = "authenticators.select"
    public static let cancelOperation = "operation.cancel"
    public static let createCredential = "credentials.create"
    public static let getCredential = "credentials.get"
    public static let listRegistrations = "registrations.list"
    public static let renameRegistration = "registrations.rename"
    public static let deleteRegistration = "registrations.delete"

    // Daemon → client notifications.
    public static let authenticatorAdded = "authenticators.added"
    public static let authenticatorRemoved = "authenticators.removed"
    public static let authenticatorChanged = "authenticators.changed"
    public static let operationStatus = "operation.status"
    public static let shuttingDown = "daemon.shuttingDown"

    /// Every method a client may call.
    public static let clientMethods = [
        hello, listAuthenticators, authenticatorInfo, watchAuthenticators, selectAuthenticator, cancelOperation,
        createCredential, getCredential, listRegistrations, renameRegistration, deleteRegistration,
    ] + ManagementMethod.all

    /// Every notification the daemon sends.
    public static let notifications = [
        authenticatorAdded, authenticatorRemoved, authenticatorChanged, operationStatus, shuttingDown,
    ]
}

/// The protocol version this build speaks (`hello`'s `protocol`).
public let protocolVersion = 1

/// hello: `{protocol, client, ui}` → `{protocol, daemon, capabilities, …}`.
public struct HelloParams: Codable, Sendable, Equatable {
    public var `protocol`: Int?
    public var client: String?
    /// The prompts this client answers, by their names without `ui.`
    /// (`Prompt.name(of:)`); nil (absent) means all of them.
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

/// `operation.status` notification.
public struct OperationStatus: Codable, Sendable, Equatable {
    public var request: JSONValue
    public var status: Status
    public var authenticator: String?
    /// For `sampleCaptured`: fingerprint samples still to take, and how the
    /// last one went (CTAP's lastEnrollSampleStatus; 0 is good).
    public var remainingSamples: Int?
    public var sampleStatus: Int?

    public enum Status: String, Codable, Sendable {
        case queued
        case processing
        case waitingForTouch
        case waitingForUv
        case selectingByTouch
        case sampleCaptured
    }

    public init(
        request: JSONValue, status: Status, authenticator: String? = nil, remainingSamples: Int? = nil, sampleStatus: Int? = nil
    ) {
        self.request = request
        self.status = status
        self.authenticator = authenticator
        self.remainingSamples = remainingSamples
        self.sampleStatus = sampleStatus
    }
}
