internal import CUdev
import AuthProtocol
import Dispatch
import FIDO2
import Glibc

/// USB keys: libfido2's manifest when the daemon starts, then a libudev
/// monitor on the `hidraw` subsystem, event-driven, never polled.
///
/// Without systemd-udevd (a container, a minimal VM) the monitor listens to
/// the kernel's own uevents instead: hidraw nodes come from devtmpfs, so
/// the path exists as soon as the kernel announces the device.
final class USBKeyWatcher: @unchecked Sendable {
    // Mutable state is touched only on the broker's queue.
    private let broker: Broker
    private let logger: Logger
    private var udev: OpaquePointer?
    private var monitor: OpaquePointer?
    private var source: (any DispatchSourceRead)?
    /// Where libfido2's manifest is read: sysfs may be slow, and the
    /// broker's queue must not wait for it. (A serial queue of our own, not
    /// a global one: see `QueueExecutor` on why the global pool stays unused.)
    private let sysfsQueue = DispatchQueue(label: "authkeyd.usb-manifest")

    init(broker: Broker, logger: Logger) {
        self.broker = broker
        self.logger = logger
    }

    deinit {
        if let monitor { udev_monitor_unref(monitor) }
        if let udev { udev_unref(udev) }
    }

    /// Which netlink group to listen to: udevd's processed events when it
    /// runs, else the kernel's.
    static var eventSource: String {
        access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel"
    }

    /// Follows hidraw events and brings up the keys present now;
    /// `initialKeysUp` runs once those are in service (or failed).
    func start(initialKeysUp: @escaping @Sendable () -> Void) {
        startMonitor()
        scan(then: initialKeysUp)
    }

    func stop() {
        source?.cancel()
        source = nil
    }

    private func startMonitor() {
        guard let udev = udev_new() else { return logger.warning("udev_new failed: USB keys will not be followed") }
        self.udev = udev
        let origin = Self.eventSource
        guard let monitor = udev_monitor_new_from_netlink(udev, origin) else {
            return logger.warning("cannot listen to \(origin) events: USB keys plugged in later will not be seen")
        }
        self.monitor = monitor
        guard udev_monitor_filter_add_match_subsystem_devtype(monitor, "hidraw", nil) >= 0,
            udev_monitor_enable_receiving(monitor) >= 0
        else { return logger.warning("cannot receive hidraw events: USB keys plugged in later will not be seen") }
        let fd = udev_monitor_get_fd(monitor)
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: broker.queue)
        source.setEventHandler { [weak self] in self?.receiveEvents() }
        self.source = source
        source.resume()
        logger.info("following hidraw devices through \(origin) events")
    }

    private func receiveEvents() {
        guard let monitor else { return }
        while let device = udev_monitor_receive_device(monitor) {
            defer { udev_device_unref(device) }
            let action = udev_device_get_action(device).map { String(cString: $0) } ?? ""
            guard let node = udev_device_get_devnode(device).map({ String(cString: $0) }) else { continue }
            switch action {
            case "add", "bind": scan()
            case "remove":
                broker.startTask { [broker] in
                    if let key = await broker.key(atPath: node) { await broker.takeDown(key) }
                }
            default: break
            }
        }
    }

    /// Reads libfido2's manifest (sysfs, so off the broker's queue) and
    /// brings up the FIDO keys not yet in service.
    private func scan(then done: (@Sendable () -> Void)? = nil) {
        let broker = broker
        let logger = logger
        sysfsQueue.async {
            let found: [DeviceDescriptor]
            do { found = try DeviceManifest.devices() } catch {
                logger.warning("cannot list USB keys: \(error)")
                done?()
                return
            }
            broker.startTask {
                defer { done?() }
                for descriptor in found where await broker.key(atPath: descriptor.path) == nil {
                    await broker.bringUp(
                        transport: .usb, path: descriptor.path, manufacturer: descriptor.manufacturer,
                        product: descriptor.product, vendorID: descriptor.vendorID, productID: descriptor.productID
                    ) { () throws(FIDO2Error) -> Device in
                        try Device.open(path: descriptor.path)
                    }
                }
            }
        }
    }
}
