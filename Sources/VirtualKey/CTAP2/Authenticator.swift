import CBOR
import Crypto
import SystemKit

/// CTAP2 command bytes (CTAP 2.1 §6), with the FIDO_2_1_PRE preview aliases
/// libfido2 still sends for credential management and bio enrollment.
public enum CTAP2Command: UInt8, Sendable {
    case makeCredential = 0x01
    case getAssertion = 0x02
    case getInfo = 0x04
    case clientPIN = 0x06
    case reset = 0x07
    case getNextAssertion = 0x08
    case bioEnrollment = 0x09
    case credentialManagement = 0x0A
    case selection = 0x0B
    case largeBlobs = 0x0C
    case config = 0x0D
    case bioEnrollmentPreview = 0x40
    case credentialManagementPreview = 0x41
}

/// The CTAP 2.1 authenticator: the key's firmware.
///
/// One request runs at a time: `process` holds `lock` for its whole length,
/// user-presence waits included, as a single-threaded key would. Commands
/// live in extensions, one file each.
final class Authenticator: CBORCommandProcessor, @unchecked Sendable {
    // Everything below `lock` is touched only while holding it.
    let lock = Lock()
    let configuration: VirtualKeyConfiguration
    let store: KeyStateStore
    let simulatedUser: SimulatedUser
    var state: KeyState
    var volatile: VolatileState

    init(configuration: VirtualKeyConfiguration, state: KeyState, store: KeyStateStore, user: SimulatedUser) {
        self.configuration = configuration
        self.state = state
        self.store = store
        self.simulatedUser = user
        self.volatile = VolatileState()
    }

    /// A power cycle: tokens, key-agreement keys and the consecutive PIN
    /// failure count are forgotten; the reset window opens again.
    func powerCycle() {
        lock.withLock { volatile = VolatileState() }
    }

    func wink() {}

    func process(_ request: [UInt8], context: CommandContext) -> [UInt8] {
        lock.withLock {
            do throws(CTAP2Status) {
                let response = try dispatch(request, context: context)
                var out: [UInt8] = [CTAP2Status.success.rawValue]
                if let response { CBOR.map(response).encode(into: &out) }
                return out
            } catch {
                return [error.rawValue]
            }
        }
    }

    private func dispatch(_ request: [UInt8], context: CommandContext) throws(CTAP2Status) -> CBORMap? {
        guard let commandByte = request.first else { throw .invalidLength }
        guard let command = CTAP2Command(rawValue: commandByte) else { throw .invalidCommand }
        volatile.forgetStatefulCommands(except: command)
        let parameters = try Parameters(decoding: request.dropFirst())
        switch command {
        case .getInfo: return getInfo()
        case .makeCredential: return try makeCredential(parameters, context: context)
        case .getAssertion: return try getAssertion(parameters, context: context)
        case .getNextAssertion: return try getNextAssertion()
        case .clientPIN: return try clientPIN(parameters, context: context)
        case .reset: return try reset(context: context)
        case .selection: return try selection(context: context)
        case .credentialManagement, .credentialManagementPreview:
            return try credentialManagement(parameters)
        case .bioEnrollment, .bioEnrollmentPreview:
            return try bioEnrollment(parameters, context: context)
        case .config: return try config(parameters)
        case .largeBlobs: return try largeBlobs(parameters)
        }
    }

    // MARK: - Shared rules

    /// "Protected by some form of user verification": a PIN is set, or a
    /// fingerprint is enrolled.
    var isProtectedByUV: Bool { state.isPINSet || isBuiltInUVConfigured }

    var isBuiltInUVConfigured: Bool { configuration.fingerprintSensor && !state.enrollments.isEmpty }

    /// Writes the state file, if there is one. A key whose flash fails
    /// answers CTAP1_ERR_OTHER rather than pretend the write happened.
    func persist() throws(CTAP2Status) {
        do { try store.save(state) } catch { throw .other }
    }

    /// Waits for a touch, mapping the outcome to CTAP's statuses.
    func requireUserPresence(_ context: CommandContext) throws(CTAP2Status) {
        switch simulatedUser.awaitPresence(context) {
        case .present: return
        case .denied: throw .operationDenied
        case .timedOut: throw .userActionTimeout
        case .cancelled: throw .keepaliveCancel
        }
    }

    /// performBuiltInUv: one fingerprint attempt. A mismatch costs one UV
    /// retry; at zero the sensor is blocked until a PIN is entered.
    /// `mismatch` is the status a failed match ends with.
    func performBuiltInUV(_ context: CommandContext, mismatch: CTAP2Status) throws(CTAP2Status) {
        guard state.uvRetries > 0 else { throw .uvBlocked }
        let (presence, matched) = simulatedUser.awaitFingerprint(context)
        switch presence {
        case .present: break
        case .denied: throw .operationDenied
        case .timedOut: throw .userActionTimeout
        case .cancelled: throw .keepaliveCancel
        }
        guard matched else {
            state.uvRetries -= 1
            try persist()
            throw state.uvRetries == 0 ? .uvBlocked : mismatch
        }
        if state.uvRetries != KeyState.maxUVRetries {
            state.uvRetries = KeyState.maxUVRetries
            try persist()
        }
    }

    /// The protocol named by a request's pinUvAuthProtocol member.
    func authProtocol(_ value: UInt64?) throws(CTAP2Status) -> PINUVAuthProtocol {
        guard let value else { throw .missingParameter }
        guard let chosen = PINUVAuthProtocol(rawValue: Int(value)), offers(chosen) else { throw .invalidParameter }
        return chosen
    }

    /// Whether the configuration offers the protocol (getInfo 0x06).
    func offers(_ authProtocol: PINUVAuthProtocol) -> Bool {
        configuration.pinUVAuthProtocols.contains(authProtocol.rawValue)
    }

    /// The key-agreement keys of the protocols the key offers.
    var offeredKeyAgreement: [PINUVAuthProtocol: P256.PrivateKey] { volatile.keyAgreement.filter { offers($0.key) } }

    /// The check shared by credential management, bio enrollment and
    /// config: a pinUvAuthParam over `message` from a live token that
    /// carries `permission` and still vouches for user verification.
    func verifyToken(
        parameter: [UInt8]?, protocolValue: UInt64?, message: [UInt8], permission: TokenPermissions
    ) throws(CTAP2Status) {
        guard let parameter else { throw .pinUvAuthTokenRequired }
        let chosen = try authProtocol(protocolValue)
        guard volatile.token.verify(message, signature: parameter, protocol: chosen) else { throw .pinAuthInvalid }
        guard volatile.token.userVerifiedFlag, volatile.token.permissions.contains(permission) else {
            throw .pinAuthInvalid
        }
    }
}

/// What a key forgets when it loses power.
struct VolatileState {
    /// One key-agreement key per PIN/UV auth protocol, regenerated after a wrong PIN.
    var keyAgreement: [PINUVAuthProtocol: P256.PrivateKey] = VolatileState.newKeyAgreementKeys()
    var token = PINUVAuthToken()
    /// Wrong PINs in a row; at 3 the key refuses PINs until power cycled.
    var consecutivePINFailures = 0
    /// When the key was last plugged in; authenticatorReset is allowed only shortly after.
    var poweredUpAt = ContinuousClock.now
    var pendingAssertions: PendingAssertions?
    var relyingPartyEnumeration: Enumeration<String>?
    var credentialEnumeration: Enumeration<[UInt8]>?
    var enrollment: PendingEnrollment?
    var largeBlobWrite: PendingLargeBlobWrite?

    init() {}

    /// Fresh volatile state that keeps the power-up time (after a reset, which is not a power cycle).
    init(poweredUpAt: ContinuousClock.Instant) {
        self.poweredUpAt = poweredUpAt
    }

    static func newKeyAgreementKeys() -> [PINUVAuthProtocol: P256.PrivateKey] {
        var keys: [PINUVAuthProtocol: P256.PrivateKey] = [:]
        for chosen in PINUVAuthProtocol.allCases {
            // Generating a P-256 key fails only without entropy, which
            // secureRandomBytes already treats as fatal.
            keys[chosen] = try! P256.PrivateKey()
        }
        return keys
    }

    mutating func regenerateKeyAgreement(_ chosen: PINUVAuthProtocol) {
        keyAgreement[chosen] = try! P256.PrivateKey()
    }

    /// Stateful commands (getNextAssertion, credential enumeration) keep
    /// their state only while the host follows up directly.
    mutating func forgetStatefulCommands(except command: CTAP2Command) {
        if command != .getNextAssertion { pendingAssertions = nil }
        if command != .credentialManagement && command != .credentialManagementPreview {
            relyingPartyEnumeration = nil
            credentialEnumeration = nil
        }
    }
}

/// A list the host walks one item at a time, within 30 seconds per step.
struct Enumeration<Item> {
    var items: [Item]
    var next = 1
    var touchedAt = ContinuousClock.now
    static var timeout: Duration { .seconds(30) }

    init(items: [Item]) { self.items = items }

    /// The next item, or nil when exhausted or stale.
    mutating func advance() -> Item? {
        guard next < items.count, ContinuousClock.now - touchedAt <= Self.timeout else { return nil }
        defer {
            next += 1
            touchedAt = .now
        }
        return items[next]
    }
}
