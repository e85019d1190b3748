internal import CFido2
import HIDReports
import Synchronization
import SystemKit

/// An open FIDO2 authenticator (`fido_dev_t`).
///
/// Every call blocks until the authenticator answers or the timeout passes,
/// so call it from a thread you own, never from Swift's cooperative pool.
/// Calls on one device are serialised; only `cancel()` may run beside
/// another call, from another thread, to end a wait for a touch.
public final class Device: @unchecked Sendable {
    // `handle` is only touched under `callLock`, except by `cancel()`, which
    // libfido2 implements as a single CTAPHID_CANCEL write.
    let handle: OpaquePointer
    private let callLock = Lock()
    private let isOpenFlag = Atomic<Bool>(false)
    private let timeoutMilliseconds: Atomic<Int>

    /// The hidraw path, or the name given to a custom connection.
    public let path: String
    /// What `reopen()` opens again: the hidraw node, or the same connection.
    private let origin: Origin
    /// The custom I/O's state for this handle (`HandleState`).
    private let ioState: HandleState

    private enum Origin {
        case hidraw(String)
        case connection(any HIDReportConnection)
    }

    /// The default time a single operation may take, touches included.
    public static let defaultTimeout: Duration = .seconds(30)

    private init(path: String, origin: Origin, closesConnection: Bool, timeout: Duration) throws(FIDO2Error) {
        FIDO2Library.ensureInitialized()
        guard let handle = fido_dev_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_dev_new") }
        self.handle = handle
        self.path = path
        self.origin = origin
        ioState = HandleState(closesConnection: closesConnection)
        self.timeoutMilliseconds = Atomic(Self.milliseconds(timeout))
        // Before open, so that CTAPHID_INIT and getInfo are bounded too;
        // libfido2's default of -1 waits forever.
        try check(fido_dev_set_timeout(handle, Int32(Self.milliseconds(timeout))), "fido_dev_set_timeout")
        var functions = customIOFunctions
        try check(fido_dev_set_io_functions(handle, &functions), "fido_dev_set_io_functions")
    }

    deinit {
        if isOpenFlag.load(ordering: .acquiring) { _ = fido_dev_close(handle) }
        var pointer: OpaquePointer? = handle
        fido_dev_free(&pointer)
    }

    /// Opens a key by its hidraw node, which it locks as libfido2 does
    /// (`HIDRawConnection`): a node another program holds fails at once
    /// with `FIDO2Error.keyLocked`.
    public static func open(path: String, timeout: Duration = defaultTimeout) throws(FIDO2Error) -> Device {
        let device = try Device(path: path, origin: .hidraw(path), closesConnection: true, timeout: timeout)
        try device.open(try HIDRawConnection(path: path))
        return device
    }

    /// Opens an authenticator reached through `connection` instead of hidraw
    /// (`fido_dev_set_io_functions`, then `fido_dev_open`). Closing the
    /// device closes the connection, unless `closesConnection` is false: a
    /// connection its owner keeps (and closes) across opens.
    public static func open(
        connection: some HIDReportConnection, name: String? = nil, timeout: Duration = defaultTimeout,
        closesConnection: Bool = true
    ) throws(FIDO2Error) -> Device {
        let device = try Device(
            path: name ?? "custom I/O", origin: .connection(connection), closesConnection: closesConnection, timeout: timeout)
        try device.open(connection)
        return device
    }

    /// `fido_dev_open` on `connection`. A key busy with another host's
    /// transaction fails CTAPHID INIT or getInfo with `channelBusy`.
    private func open(_ connection: any HIDReportConnection) throws(FIDO2Error) {
        let pseudoPath = PendingConnections.file(connection, state: ioState)
        defer { _ = PendingConnections.take(pseudoPath) }
        _ = ioState.takeChannelBusy()
        do throws(FIDO2Error) {
            try check(fido_dev_open(handle, pseudoPath), "fido_dev_open")
        } catch {
            if ioState.takeChannelBusy() { throw FIDO2Error(code: FIDO2Error.channelBusy.code, function: "fido_dev_open") }
            throw error
        }
        isOpenFlag.store(true, ordering: .releasing)
    }

    /// Closes the key and opens it again, so that libfido2 reads getInfo
    /// afresh. libfido2 decides at open how to verify the user later (a
    /// token from the key's own sensor only if getInfo then said `uv:
    /// true`; see `fido_dev_has_uv`), so after a PIN is set or a
    /// fingerprint enrolled or removed, the old handle would ask the wrong
    /// way. A hidraw node is opened (and locked) anew; a custom connection
    /// stays up, and only the channel is new.
    public func reopen() throws(FIDO2Error) {
        try callLock.withLock { () throws(FIDO2Error) in
            guard isOpenFlag.exchange(false, ordering: .acquiringAndReleasing) else {
                throw FIDO2Error(code: FIDO_ERR_INVALID_ARGUMENT, function: "device closed")
            }
            switch origin {
            case .hidraw(let path):
                _ = fido_dev_close(handle)
                try open(try HIDRawConnection(path: path))
            case .connection(let connection):
                let closes = ioState.closesConnection.exchange(false, ordering: .acquiringAndReleasing)
                _ = fido_dev_close(handle)
                ioState.closesConnection.store(closes, ordering: .releasing)
                try open(connection)
            }
        }
    }

    /// Whether the device is open: not yet closed, and not failed to open again.
    public var isOpen: Bool { isOpenFlag.load(ordering: .acquiring) }

    /// Closes the device (`fido_dev_close`); later calls fail.
    public func close() {
        callLock.withLock {
            if isOpenFlag.exchange(false, ordering: .acquiringAndReleasing) { _ = fido_dev_close(handle) }
        }
    }

    /// Asks the authenticator to abandon the request in progress
    /// (`fido_dev_cancel`, a CTAPHID_CANCEL). Safe from any thread; the
    /// blocked call then fails with `FIDO2Error.keepaliveCancel`.
    public func cancel() throws(FIDO2Error) {
        FIDO2Library.ensureInitialized()
        guard isOpenFlag.load(ordering: .acquiring) else { return }
        try check(fido_dev_cancel(handle), "fido_dev_cancel")
    }

    /// How long each later operation may take (`fido_dev_set_timeout`).
    public var timeout: Duration {
        get { .milliseconds(timeoutMilliseconds.load(ordering: .relaxed)) }
        set {
            let ms = Self.milliseconds(newValue)
            timeoutMilliseconds.store(ms, ordering: .relaxed)
            callLock.withLock { _ = fido_dev_set_timeout(handle, Int32(ms)) }
        }
    }

    /// Runs one libfido2 call on the handle, serialised with every other.
    func perform<R>(_ body: (OpaquePointer) throws(FIDO2Error) -> R) throws(FIDO2Error) -> R {
        FIDO2Library.ensureInitialized()
        return try callLock.withLock { () throws(FIDO2Error) -> R in
            guard isOpenFlag.load(ordering: .acquiring) else {
                throw FIDO2Error(code: FIDO_ERR_INVALID_ARGUMENT, function: "device closed")
            }
            _ = ioState.takeChannelBusy()
            do throws(FIDO2Error) {
                return try body(handle)
            } catch {
                // libfido2 said FIDO_ERR_RX; the key said why.
                if ioState.takeChannelBusy() { throw FIDO2Error(code: FIDO2Error.channelBusy.code, function: error.function) }
                throw error
            }
        }
    }

    /// Runs a call with a different timeout, restoring the device's own after.
    func perform<R>(timeout: Duration, _ body: (OpaquePointer) throws(FIDO2Error) -> R) throws(FIDO2Error) -> R {
        try perform { (handle) throws(FIDO2Error) -> R in
            _ = fido_dev_set_timeout(handle, Int32(Self.milliseconds(timeout)))
            defer { _ = fido_dev_set_timeout(handle, Int32(timeoutMilliseconds.load(ordering: .relaxed))) }
            return try body(handle)
        }
    }

    /// A timeout for libfido2: whole milliseconds, at least 1 (0 would mean "do not wait").
    /// (At most Int32.max: libfido2 takes an `int`.)
    static func milliseconds(_ duration: Duration) -> Int {
        min(Int(Int32.max), max(1, duration.wholeMilliseconds))
    }
}

// MARK: - What libfido2 learnt while opening

extension Device {
    /// Whether the key answered CTAPHID_INIT with the CBOR capability (`fido_dev_is_fido2`).
    public var isFIDO2: Bool { fido_dev_is_fido2(handle) }
    /// A PIN is set (`clientPin: true`, `fido_dev_has_pin`).
    public var hasPIN: Bool { fido_dev_has_pin(handle) }
    /// Built-in user verification is configured (`uv: true`, `fido_dev_has_uv`).
    public var hasUV: Bool { fido_dev_has_uv(handle) }
    /// The key knows about PINs at all (`clientPin` present, `fido_dev_supports_pin`).
    public var supportsPIN: Bool { fido_dev_supports_pin(handle) }
    /// The key has built-in user verification (`uv` present, `fido_dev_supports_uv`).
    public var supportsUV: Bool { fido_dev_supports_uv(handle) }
    public var supportsCredentialManagement: Bool { fido_dev_supports_credman(handle) }
    public var supportsCredentialProtection: Bool { fido_dev_supports_cred_prot(handle) }
    /// pinUvAuthToken with permissions (CTAP 2.1, `fido_dev_supports_permissions`).
    public var supportsPermissions: Bool { fido_dev_supports_permissions(handle) }

    /// The CTAPHID INIT reply's version and capability bytes.
    public var hidVersion: (protocolVersion: UInt8, major: UInt8, minor: UInt8, build: UInt8, capabilities: UInt8) {
        (fido_dev_protocol(handle), fido_dev_major(handle), fido_dev_minor(handle), fido_dev_build(handle), fido_dev_flags(handle))
    }
}
