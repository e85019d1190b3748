import AuthProtocol
import Dispatch
import FIDO2
import Hotplug
import SystemKit

/// USB keys: the ones present when the daemon starts, then each one
/// plugged in or pulled out, as a `HotplugSource` reports them (libudev's,
/// `UdevHotplug`, unless a test scripts its own).
final class USBKeyWatcher: Sendable {
    private let broker: Broker
    private let logger: Logger
    private let hotplug: any HotplugSource
    private let openKey: @Sendable (DeviceDescriptor) throws(FIDO2Error) -> Device
    /// Where the keys present are listed: sysfs may be slow, and the
    /// broker's queue must not wait for it. (A serial queue of our own, not
    /// a global one: see `QueueExecutor` on why the global pool stays unused.)
    private let sysfsQueue = DispatchQueue(label: "authkeyd.usb-manifest")
    /// The paths being brought up. Scans overlap (two keys plugged in at
    /// once), and a bring-up suspends while the key opens: without this,
    /// both scans would find the first key missing and bring it up twice.
    private let bringingUp = Protected<Set<String>>([])

    init(
        broker: Broker, logger: Logger, hotplug: any HotplugSource = UdevHotplug(),
        openKey: @escaping @Sendable (DeviceDescriptor) throws(FIDO2Error) -> Device = { descriptor throws(FIDO2Error) in
            try Device.open(path: descriptor.path)
        }
    ) {
        self.broker = broker
        self.logger = logger
        self.hotplug = hotplug
        self.openKey = openKey
    }

    /// Follows hotplug events and brings up the keys present now;
    /// `initialKeysUp` runs once those are in service (or failed).
    func start(initialKeysUp: @escaping @Sendable () -> Void) {
        do {
            let origin = try hotplug.start(on: broker.queue) { [weak self] event in self?.handle(event) }
            logger.info("following hidraw devices through \(origin)")
        } catch {
            logger.warning("\(error)")
        }
        scan(then: initialKeysUp)
    }

    func stop() {
        hotplug.stop()
    }

    /// On the broker's queue. A node added brings up whatever is new (the
    /// manifest says whether it is a FIDO key); a node removed takes down
    /// the key there, if any.
    private func handle(_ event: HotplugEvent) {
        switch event {
        case .added: scan()
        case .removed(let node):
            broker.startTask { [broker] in
                if let key = await broker.key(atPath: node) {
                    await broker.takeDown(key)
                } else {
                    await broker.abandonBringUp(atPath: node)
                }
            }
        }
    }

    /// Lists the keys present (off the broker's queue) and brings up the
    /// ones not yet in service, in the order listed.
    private func scan(then done: (@Sendable () -> Void)? = nil) {
        let broker = broker
        let logger = logger
        sysfsQueue.async { [self] in
            let found: [DeviceDescriptor]
            do { found = try hotplug.keysPresent() } catch {
                logger.warning("cannot list USB keys: \(error)")
                done?()
                return
            }
            broker.startTask { [self] in
                defer { done?() }
                // Side by side: a key another program has waits for it
                // without holding up the keys listed after it. Their ids
                // are given in the order listed, before any comes up.
                var fresh: [(DeviceDescriptor, String)] = []
                for descriptor in found where await claim(descriptor) {
                    fresh.append((descriptor, await broker.reserveKeyID(.usb)))
                }
                await withTaskGroup(of: Void.self) { group in
                    for (descriptor, id) in fresh { group.addTask { await self.bringUp(descriptor, as: id) } }
                }
            }
        }
    }

    /// Claims a path for its bring-up unless it is coming up or in service
    /// already; `bringUp` releases it. A scan finds a key either in flight
    /// or in the registry.
    private func claim(_ descriptor: DeviceDescriptor) async -> Bool {
        guard bringingUp.withLock({ $0.insert(descriptor.path).inserted }) else { return false }
        guard await broker.key(atPath: descriptor.path) == nil else {
            _ = bringingUp.withLock { $0.remove(descriptor.path) }
            return false
        }
        return true
    }

    private func bringUp(_ descriptor: DeviceDescriptor, as id: String) async {
        defer { _ = bringingUp.withLock { $0.remove(descriptor.path) } }
        let openKey = openKey
        await broker.bringUp(
            id: id, transport: .usb, path: descriptor.path, manufacturer: descriptor.manufacturer,
            product: descriptor.product, vendorID: descriptor.vendorID, productID: descriptor.productID,
            lockHolder: { FileLocks.holder(ofFileAt: descriptor.path) }
        ) { () throws(FIDO2Error) -> Device in
            try openKey(descriptor)
        }
    }
}
