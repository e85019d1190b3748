internal import CFido2

/// An error from libfido2, or from the authenticator through it.
///
/// `code` is libfido2's own number (`FIDO_ERR_PIN_INVALID` is 0x31, and its
/// negative codes are libfido2's local failures); `name` is the C constant's
/// name, which the daemon passes on to clients as `error.data.fido`.
/// Equality is by code.
public struct FIDO2Error: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Int32
    /// The libfido2 call that failed, for logs.
    public let function: String

    public init(code: Int32, function: String = "") {
        self.code = code
        self.function = function
    }

    /// The C name of the code, such as `FIDO_ERR_PIN_INVALID`.
    public var name: String { Self.names[code] ?? "FIDO_ERR_\(code)" }

    /// libfido2's description of the code (`fido_strerr`).
    public var message: String {
        if self == .keyLocked { return "the key is in use by another program" }
        if self == .channelBusy { return "the key is busy with another program's request" }
        return String(cString: fido_strerr(Int32(code)))
    }

    public var description: String {
        // libfido2 describes many codes by their own name; say it once.
        let text = message == name ? name : "\(name): \(message)"
        return function.isEmpty ? text : "\(function): \(text)"
    }

    public static func == (lhs: FIDO2Error, rhs: FIDO2Error) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static let success = FIDO2Error(code: 0)
    public static let invalidCommand = FIDO2Error(code: 1)
    public static let invalidParameter = FIDO2Error(code: 2)
    public static let invalidLength = FIDO2Error(code: 3)
    public static let invalidSeq = FIDO2Error(code: 4)
    public static let timeout = FIDO2Error(code: 5)
    public static let channelBusy = FIDO2Error(code: 6)
    public static let lockRequired = FIDO2Error(code: 10)
    public static let invalidChannel = FIDO2Error(code: 11)
    public static let cborUnexpectedType = FIDO2Error(code: 17)
    public static let invalidCbor = FIDO2Error(code: 18)
    public static let missingParameter = FIDO2Error(code: 20)
    public static let limitExceeded = FIDO2Error(code: 21)
    public static let unsupportedExtension = FIDO2Error(code: 22)
    public static let fpDatabaseFull = FIDO2Error(code: 23)
    public static let largeblobStorageFull = FIDO2Error(code: 24)
    public static let credentialExcluded = FIDO2Error(code: 25)
    public static let processing = FIDO2Error(code: 33)
    public static let invalidCredential = FIDO2Error(code: 34)
    public static let userActionPending = FIDO2Error(code: 35)
    public static let operationPending = FIDO2Error(code: 36)
    public static let noOperations = FIDO2Error(code: 37)
    public static let unsupportedAlgorithm = FIDO2Error(code: 38)
    public static let operationDenied = FIDO2Error(code: 39)
    public static let keyStoreFull = FIDO2Error(code: 40)
    public static let notBusy = FIDO2Error(code: 41)
    public static let noOperationPending = FIDO2Error(code: 42)
    public static let unsupportedOption = FIDO2Error(code: 43)
    public static let invalidOption = FIDO2Error(code: 44)
    public static let keepaliveCancel = FIDO2Error(code: 45)
    public static let noCredentials = FIDO2Error(code: 46)
    public static let userActionTimeout = FIDO2Error(code: 47)
    public static let notAllowed = FIDO2Error(code: 48)
    public static let pinInvalid = FIDO2Error(code: 49)
    public static let pinBlocked = FIDO2Error(code: 50)
    public static let pinAuthInvalid = FIDO2Error(code: 51)
    public static let pinAuthBlocked = FIDO2Error(code: 52)
    public static let pinNotSet = FIDO2Error(code: 53)
    public static let pinRequired = FIDO2Error(code: 54)
    public static let pinPolicyViolation = FIDO2Error(code: 55)
    public static let pinTokenExpired = FIDO2Error(code: 56)
    public static let requestTooLarge = FIDO2Error(code: 57)
    public static let actionTimeout = FIDO2Error(code: 58)
    public static let upRequired = FIDO2Error(code: 59)
    public static let uvBlocked = FIDO2Error(code: 60)
    public static let uvInvalid = FIDO2Error(code: 63)
    public static let unauthorizedPermission = FIDO2Error(code: 64)
    public static let other = FIDO2Error(code: 127)
    public static let tx = FIDO2Error(code: -1)
    public static let rx = FIDO2Error(code: -2)
    public static let rxNotCbor = FIDO2Error(code: -3)
    public static let rxInvalidCbor = FIDO2Error(code: -4)
    public static let invalidParam = FIDO2Error(code: -5)
    public static let invalidSig = FIDO2Error(code: -6)
    public static let invalidArgument = FIDO2Error(code: -7)
    public static let userPresenceRequired = FIDO2Error(code: -8)
    public static let internalError = FIDO2Error(code: -9)
    public static let notFound = FIDO2Error(code: -10)
    public static let compress = FIDO2Error(code: -11)
    /// Not libfido2's: the key's hidraw node is locked by another program
    /// (`HIDRawConnection`), which libfido2 would have waited out itself.
    public static let keyLocked = FIDO2Error(code: -1000)

    /// Another program has the key: its node is locked (`keyLocked`), or it
    /// answered `channelBusy` because another host's transaction is in
    /// flight on another channel. Either way nothing was done, and the same
    /// call can be tried again once the key is free.
    public var isKeyBusy: Bool { self == .keyLocked || self == .channelBusy }

    private static let names: [Int32: String] = [
        0: "FIDO_ERR_SUCCESS",
        1: "FIDO_ERR_INVALID_COMMAND",
        2: "FIDO_ERR_INVALID_PARAMETER",
        3: "FIDO_ERR_INVALID_LENGTH",
        4: "FIDO_ERR_INVALID_SEQ",
        5: "FIDO_ERR_TIMEOUT",
        6: "FIDO_ERR_CHANNEL_BUSY",
        10: "FIDO_ERR_LOCK_REQUIRED",
        11: "FIDO_ERR_INVALID_CHANNEL",
        17: "FIDO_ERR_CBOR_UNEXPECTED_TYPE",
        18: "FIDO_ERR_INVALID_CBOR",
        20: "FIDO_ERR_MISSING_PARAMETER",
        21: "FIDO_ERR_LIMIT_EXCEEDED",
        22: "FIDO_ERR_UNSUPPORTED_EXTENSION",
        23: "FIDO_ERR_FP_DATABASE_FULL",
        24: "FIDO_ERR_LARGEBLOB_STORAGE_FULL",
        25: "FIDO_ERR_CREDENTIAL_EXCLUDED",
        33: "FIDO_ERR_PROCESSING",
        34: "FIDO_ERR_INVALID_CREDENTIAL",
        35: "FIDO_ERR_USER_ACTION_PENDING",
        36: "FIDO_ERR_OPERATION_PENDING",
        37: "FIDO_ERR_NO_OPERATIONS",
        38: "FIDO_ERR_UNSUPPORTED_ALGORITHM",
        39: "FIDO_ERR_OPERATION_DENIED",
        40: "FIDO_ERR_KEY_STORE_FULL",
        41: "FIDO_ERR_NOT_BUSY",
        42: "FIDO_ERR_NO_OPERATION_PENDING",
        43: "FIDO_ERR_UNSUPPORTED_OPTION",
        44: "FIDO_ERR_INVALID_OPTION",
        45: "FIDO_ERR_KEEPALIVE_CANCEL",
        46: "FIDO_ERR_NO_CREDENTIALS",
        47: "FIDO_ERR_USER_ACTION_TIMEOUT",
        48: "FIDO_ERR_NOT_ALLOWED",
        49: "FIDO_ERR_PIN_INVALID",
        50: "FIDO_ERR_PIN_BLOCKED",
        51: "FIDO_ERR_PIN_AUTH_INVALID",
        52: "FIDO_ERR_PIN_AUTH_BLOCKED",
        53: "FIDO_ERR_PIN_NOT_SET",
        54: "FIDO_ERR_PIN_REQUIRED",
        55: "FIDO_ERR_PIN_POLICY_VIOLATION",
        56: "FIDO_ERR_PIN_TOKEN_EXPIRED",
        57: "FIDO_ERR_REQUEST_TOO_LARGE",
        58: "FIDO_ERR_ACTION_TIMEOUT",
        59: "FIDO_ERR_UP_REQUIRED",
        60: "FIDO_ERR_UV_BLOCKED",
        63: "FIDO_ERR_UV_INVALID",
        64: "FIDO_ERR_UNAUTHORIZED_PERM",
        127: "FIDO_ERR_ERR_OTHER",
        -1: "FIDO_ERR_TX",
        -2: "FIDO_ERR_RX",
        -3: "FIDO_ERR_RX_NOT_CBOR",
        -4: "FIDO_ERR_RX_INVALID_CBOR",
        -5: "FIDO_ERR_INVALID_PARAM",
        -6: "FIDO_ERR_INVALID_SIG",
        -7: "FIDO_ERR_INVALID_ARGUMENT",
        -8: "FIDO_ERR_USER_PRESENCE_REQUIRED",
        -9: "FIDO_ERR_INTERNAL",
        -10: "FIDO_ERR_NOTFOUND",
        -11: "FIDO_ERR_COMPRESS",
        -1000: "AUTHKEYD_KEY_LOCKED",
    ]
}

/// Throws unless a libfido2 call returned `FIDO_OK`.
@inline(__always)
func check(_ result: Int32, _ function: @autoclosure () -> String) throws(FIDO2Error) {
    guard result == FIDO_OK else { throw FIDO2Error(code: result, function: function()) }
}
