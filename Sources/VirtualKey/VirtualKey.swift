import Synchronization
import SystemKit

/// A complete software CTAP 2.1 authenticator behind a CTAPHID interface;
/// with `configuration.ctap == .u2f`, a key that speaks only CTAP1/U2F
/// (`U2FAuthenticator`) instead.
///
/// Hosts reach it through front ends: `connect()` gives an in-process
/// connection for libfido2's custom I/O; `VirtualKeySocketServer` serves it
/// on a `SOCK_SEQPACKET` socket. Several hosts may use it at once, as
/// several programs may open one hidraw node.
///
/// The simulated user (touch, fingerprint) and injected faults can be
/// changed while the key runs.
public final class VirtualKey: Sendable {
    public let configuration: VirtualKeyConfiguration
    let transport: CTAPHIDTransport
    let authenticator: Authenticator
    let user: SimulatedUser
    private let faults: FaultInjector
    private let pluggedIn = Atomic<Bool>(true)
    /// Open in-process connections, held weakly: each connection holds its
    /// key, and a host that drops one without closing it (a test's raw
    /// host) must not keep both alive for good.
    private let connections = Protected<[ObjectIdentifier: WeakConnection]>([:])
    private let unplugHandlers = Protected<[@Sendable () -> Void]>([])
    private let plugInHandlers = Protected<[@Sendable () -> Void]>([])

    /// Creates the key; with a state file, loads it or creates it.
    public init(configuration: VirtualKeyConfiguration = VirtualKeyConfiguration()) throws(VirtualKeyError) {
        self.configuration = configuration
        if configuration.ctap == .u2f && configuration.initialPIN != nil {
            throw .configuration("a U2F key (ctap=u2f) has no PIN: leave pin= out")
        }
        let store = KeyStateStore(path: configuration.stateFile)
        let state: KeyState
        do {
            if let loaded = try store.load() {
                state = loaded
            } else {
                var fresh = try KeyState.fresh(aaguid: configuration.aaguid, productName: configuration.productName)
                if let pin = configuration.initialPIN {
                    try Authenticator.validateNewPIN(Array(pin.utf8), minimumLength: fresh.minPINLength)
                    fresh.setPIN(Array(pin.utf8))
                    if let retries = configuration.initialPINRetries { fresh.pinRetries = retries }
                }
                try store.save(fresh)
                state = fresh
            }
        } catch let error as StateFileError {
            throw .stateFile(error)
        } catch is CTAP2Status {
            throw .configuration("the initial PIN must be 4 to 63 bytes of UTF-8, at least 4 characters")
        } catch {
            throw .configuration("\(error)")
        }
        user = SimulatedUser(
            presence: configuration.presence, verification: configuration.userVerification,
            timeout: configuration.presenceTimeout)
        authenticator = Authenticator(configuration: configuration, state: state, store: store, user: user)
        faults = FaultInjector()
        faults.setRules(configuration.faultRules)
        let u2f = configuration.ctap == .u2f ? U2FAuthenticator(authenticator: authenticator, user: user) : nil
        transport = CTAPHIDTransport(processor: authenticator, messageProcessor: u2f, faults: faults)
        faults.onVanish { [weak self] in self?.unplug() }
    }

    // MARK: Front ends

    /// A new in-process connection, for `FIDO2.Device.open(connection:)`
    /// (or `openDevice()`, in VirtualKeyDevice, which opens it so).
    public func connect() -> InProcessConnection {
        let connection = InProcessConnection(key: self)
        connections.withLock { $0[ObjectIdentifier(connection)] = WeakConnection(connection) }
        return connection
    }

    func forget(_ connection: InProcessConnection) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    // MARK: The simulated user

    /// How the user answers the next requests for a touch.
    public var presence: PresenceBehaviour {
        get { user.presence }
        set { user.presence = newValue }
    }

    /// Whether the next fingerprints match.
    public var userVerification: UserVerificationBehaviour {
        get { user.verification }
        set { user.verification = newValue }
    }

    /// Touches the key (for `PresenceBehaviour.manual`).
    public func touch() { user.touch() }

    /// Makes the key misbehave in its next CTAP2 replies.
    public func injectFaults(_ rules: [FaultRule]) { faults.setRules(rules) }

    // MARK: Plugging

    public var isPluggedIn: Bool { pluggedIn.load(ordering: .acquiring) }

    /// Pulls the key out: every connection fails from now on, and front ends
    /// drop their clients.
    public func unplug() {
        guard pluggedIn.exchange(false, ordering: .acquiringAndReleasing) else { return }
        transport.reset()
        let open = connections.withLock { connections in
            defer { connections.removeAll() }
            return connections.values.compactMap(\.connection)
        }
        open.forEach { $0.unplugged() }
        unplugHandlers.withLock { $0 }.forEach { $0() }
    }

    /// Plugs the key back in: a power cycle (PIN tokens and the
    /// consecutive-failure count are gone; reset is allowed for a while).
    public func plugIn() {
        guard !isPluggedIn else { return }
        authenticator.powerCycle()
        pluggedIn.store(true, ordering: .releasing)
        plugInHandlers.withLock { $0 }.forEach { $0() }
    }

    /// Runs `handler` whenever the key is unplugged: front ends drop their
    /// hosts, a daemon takes the key out of service.
    public func onUnplug(_ handler: @escaping @Sendable () -> Void) {
        unplugHandlers.withLock { $0.append(handler) }
    }

    /// Runs `handler` whenever the key is plugged back in (front ends serve again).
    public func onPlugIn(_ handler: @escaping @Sendable () -> Void) {
        plugInHandlers.withLock { $0.append(handler) }
    }
}

/// Why a virtual key could not be created.
public enum VirtualKeyError: Error, CustomStringConvertible, Sendable {
    case stateFile(StateFileError)
    case configuration(String)

    public var description: String {
        switch self {
        case .stateFile(let error): return error.description
        case .configuration(let why): return "virtual key configuration: \(why)"
        }
    }
}

/// Loads and saves a key's state file, crash-safely; does nothing without a path.
struct KeyStateStore: Sendable {
    let path: String?

    func load() throws(StateFileError) -> KeyState? {
        guard let path else { return nil }
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(path) } catch { throw .io("\(error)") }
        guard let bytes else { return nil }
        return try KeyState(encoded: bytes)
    }

    func save(_ state: KeyState) throws(StateFileError) {
        guard let path else { return }
        do { try AtomicFile.write(state.encoded(), to: path, permissions: 0o600) } catch { throw .io("\(error)") }
    }
}

private struct WeakConnection {
    weak var connection: InProcessConnection?
    init(_ connection: InProcessConnection) { self.connection = connection }
}
