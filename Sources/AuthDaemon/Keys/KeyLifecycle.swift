import AuthProtocol
import Dispatch
import FIDO2
import SystemKit

extension Broker {
    /// How long one try at a key's first getInfo may take, busy waits included.
    static let bringUpAttempt: Duration = .seconds(30)
    /// Tries at a key that fails for another reason than being busy, and
    /// the pause between them: a key plugged in may still be settling.
    static let bringUpTries = 3
    static let bringUpPause: Duration = .seconds(1)

    /// Brings a key into service: gives it a worker thread of its own,
    /// reads getInfo (which opens the key; its worker closes it again after
    /// the linger), gives it an id, and tells the watchers.
    ///
    /// A key another program has is waited for, for as long as that takes
    /// and its node is there (`abandonBringUp`); a key that fails otherwise
    /// is tried `bringUpTries` times.
    @discardableResult
    func bringUp(
        id reserved: String? = nil, transport: Transport, path: String, manufacturer: String, product: String,
        vendorID: UInt16 = 0, productID: UInt16 = 0, lockHolder: @escaping @Sendable () -> LockHolder? = { nil },
        open: @escaping @Sendable () throws(FIDO2Error) -> Device
    ) async -> RegisteredKey? {
        let id = reserved ?? keys.reserveID(transport)
        // The key, once in service, for the check at each later open.
        let inService = KeyInService()
        let worker = DeviceWorker(
            name: id, linger: configuration.keyLinger, lockHolder: lockHolder,
            opened: { [weak self] device in
                guard let self, let key = inService.key else { return }
                self.notice(changesSinceLastOpen: device, of: key)
            }, open: open)
        keys.comingUp[path] = worker
        let snapshot = await firstSnapshot(of: worker, at: path)
        if keys.comingUp[path] === worker { keys.comingUp[path] = nil }
        guard let snapshot, !isShuttingDown else {
            worker.stop()
            return nil
        }
        let key = RegisteredKey(
            id: id, transport: transport, path: path, manufacturer: manufacturer, product: product,
            vendorID: vendorID, productID: productID, worker: worker, snapshot: snapshot)
        inService.key = key
        keys.insert(key)
        logger.info("key \(id) added: \(product) (\(transport.rawValue), \(path))")
        notifyWatchers(Method.authenticatorAdded, AuthenticatorEvent(authenticator: wire(key)))
        return key
    }

    private func firstSnapshot(of worker: DeviceWorker, at path: String) async -> KeySnapshot? {
        var failures = 0
        let logger = logger
        while !isShuttingDown {
            do {
                let deadline = DispatchTime.now() + .milliseconds(Self.bringUpAttempt.wholeMilliseconds)
                return try await worker.call(until: deadline, whileBusy: { holder in
                    logger.info("the key at \(path) is in use by \(holder?.description ?? "another program"); waiting for it")
                }) { device throws(FIDO2Error) in
                    try device.snapshot()
                }
            } catch {
                // Stopped: its node went, or the daemon is stopping.
                if worker.hasStopped { return nil }
                if error.isKeyBusy { continue }
                failures += 1
                guard failures < Self.bringUpTries else {
                    logger.warning("cannot use the key at \(path): \(error) (tried \(failures) times)")
                    return nil
                }
                logger.info("the key at \(path) did not answer (\(error)); trying again in \(Self.bringUpPause)")
                try? await Task.sleep(for: Self.bringUpPause)
            }
        }
        return nil
    }

    /// On the key's thread, just opened: while it was closed, another
    /// program may have changed it (`fido2-token -S` set a PIN, say).
    /// libfido2's open read getInfo; where its PIN and UV flags disagree
    /// with what the daemon keeps, the key is read again (still within the
    /// call that opened it, so on the key's one path) and the watchers told.
    nonisolated func notice(changesSinceLastOpen device: Device, of key: RegisteredKey) {
        let kept = key.info.supports
        guard device.hasPIN != kept.clientPIN.isOn || device.hasUV != kept.userVerification.isOn else { return }
        let fresh: KeySnapshot
        do {
            fresh = try device.snapshot()
        } catch {
            logger.warning("key \(key.id) was changed by another program, and reading it again failed: \(error)")
            return
        }
        guard key.update(to: fresh) else { return }
        logger.info("key \(key.id) was changed by another program (PIN set: \(device.hasPIN), built-in verification: \(device.hasUV))")
        queue.async { [self] in assumeIsolated { broker in broker.keyChanged(key) } }
    }

    /// What clients see of `key` changed: the list is encoded again, and
    /// the watchers hear.
    func keyChanged(_ key: RegisteredKey) {
        keys.keyChanged()
        if keys[key.id] != nil {
            notifyWatchers(Method.authenticatorChanged, AuthenticatorEvent(authenticator: wire(key)))
        }
    }

    /// An id for a key about to come up (keys found together are given
    /// theirs in the order found, before any comes up).
    func reserveKeyID(_ transport: Transport) -> String { keys.reserveID(transport) }

    /// A node gone before its key was in service: its bring-up stops.
    func abandonBringUp(atPath path: String) {
        keys.comingUp.removeValue(forKey: path)?.stop()
    }

    /// Takes a key out of service (unplugged, its socket gone): what ran on
    /// it is cancelled, and the watchers are told.
    func takeDown(_ key: RegisteredKey) {
        guard keys.remove(key) != nil else { return }
        key.worker.stop()
        logger.info("key \(key.id) removed (\(key.path))")
        notifyWatchers(Method.authenticatorRemoved, AuthenticatorEvent(authenticator: wire(key)))
    }

    func key(atPath path: String) -> RegisteredKey? {
        keys.key(atPath: path)
    }

    /// The key as clients see it.
    func wire(_ key: RegisteredKey) -> Authenticator { keys.wire(key) }

    var orderedKeys: [RegisteredKey] { keys.ordered }

    /// The present keys as `authenticators.list` and `.watch` answer,
    /// serialized.
    func keyList() -> [UInt8] { keys.list() }
}

/// The key a worker serves, once it is in service, held weakly: the key
/// holds its worker, whose `opened` check holds this, and a strong hold
/// would keep both alive for good (LeakSanitizer found them).
private final class KeyInService: @unchecked Sendable {
    // `reference` is touched only with `lock` held.
    private let lock = Lock()
    private weak var reference: RegisteredKey?

    var key: RegisteredKey? {
        get { lock.withLock { reference } }
        set { lock.withLock { reference = newValue } }
    }
}
