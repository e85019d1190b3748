internal import CUdev
import Dispatch
import FIDO2
import SystemKit

/// USB keys through libudev: libfido2's manifest for the keys present, and a
/// monitor on the `hidraw` subsystem for their events, event-driven, never
/// polled. The only code that touches libudev.
///
/// Without systemd-udevd (a container, a minimal VM) the monitor listens to
/// the kernel's own uevents instead: hidraw nodes come from devtmpfs, so
/// the path exists as soon as the kernel announces the device.
public final class UdevHotplug: HotplugSource, @unchecked Sendable {
    // Set by `start`, read by the event handler, both on the queue given to
    // `start`; released in deinit.
    private var udev: OpaquePointer?
    private var monitor: OpaquePointer?
    private var source: (any DispatchSourceRead)?

    public init() {}

    deinit {
        source?.cancel()
        if let monitor { udev_monitor_unref(monitor) }
        if let udev { udev_unref(udev) }
    }

    /// Which netlink group to listen to: udevd's processed events when it
    /// runs, else the kernel's.
    public static var eventOrigin: String {
        FileSystem.exists("/run/udev/control") ? "udev" : "kernel"
    }

    public func keysPresent() throws -> [DeviceDescriptor] {
        try DeviceManifest.devices()
    }

    public func start(on queue: DispatchQueue, _ handler: @escaping @Sendable (HotplugEvent) -> Void) throws(HotplugError)
        -> String
    {
        guard let udev = udev_new() else { throw .unavailable }
        self.udev = udev
        let origin = Self.eventOrigin
        guard let monitor = udev_monitor_new_from_netlink(udev, origin) else { throw .cannotListen(origin: origin) }
        self.monitor = monitor
        guard udev_monitor_filter_add_match_subsystem_devtype(monitor, "hidraw", nil) >= 0,
            udev_monitor_enable_receiving(monitor) >= 0
        else { throw .cannotReceive }
        let source = DispatchSource.makeReadSource(fileDescriptor: udev_monitor_get_fd(monitor), queue: queue)
        source.setEventHandler { [weak self] in self?.receiveEvents(handler) }
        self.source = source
        source.resume()
        return "\(origin) events"
    }

    public func stop() {
        source?.cancel()
        source = nil
    }

    /// Drains the monitor: its socket is non-blocking, so the loop ends
    /// when no event is left.
    private func receiveEvents(_ handler: (HotplugEvent) -> Void) {
        guard let monitor, source != nil else { return }
        while let device = udev_monitor_receive_device(monitor) {
            defer { udev_device_unref(device) }
            let action = udev_device_get_action(device).map { String(cString: $0) } ?? ""
            guard let node = udev_device_get_devnode(device).map({ String(cString: $0) }),
                let event = HotplugEvent(action: action, node: node)
            else { continue }
            handler(event)
        }
    }
}
