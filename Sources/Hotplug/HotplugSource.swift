import Dispatch
import FIDO2

/// Where the daemon learns which USB FIDO keys are plugged in, and when one
/// comes or goes. The daemon's own is `UdevHotplug`; a test scripts one, so
/// that what the daemon does with the events is checked without hardware.
public protocol HotplugSource: AnyObject, Sendable {
    /// The FIDO keys present now. It may read sysfs, and be slow: callers
    /// call it off any queue that must stay responsive.
    func keysPresent() throws -> [DeviceDescriptor]

    /// Starts delivering events to `handler` on `queue`, and says where they
    /// come from (for the log). Throws when no events will come: the keys
    /// present can still be listed.
    func start(on queue: DispatchQueue, _ handler: @escaping @Sendable (HotplugEvent) -> Void) throws(HotplugError)
        -> String

    /// No event is delivered once this returns on the queue given to `start`.
    func stop()
}

/// A hidraw node that appeared or went away.
public enum HotplugEvent: Equatable, Sendable {
    case added(node: String)
    case removed(node: String)

    /// The event a udev action on `node` stands for; nil for the actions
    /// that change nothing about which keys are present ("change", "unbind"…).
    public init?(action: String, node: String) {
        switch action {
        case "add", "bind": self = .added(node: node)
        case "remove": self = .removed(node: node)
        default: return nil
        }
    }
}

/// Why hotplug events will not come; the description is the log line.
public enum HotplugError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `udev_new` failed.
    case unavailable
    /// The netlink monitor for `origin` ("udev" or "kernel") could not be made.
    case cannotListen(origin: String)
    /// The monitor exists but cannot be filtered or enabled.
    case cannotReceive

    public var description: String {
        switch self {
        case .unavailable: return "udev_new failed: USB keys will not be followed"
        case .cannotListen(let origin):
            return "cannot listen to \(origin) events: USB keys plugged in later will not be seen"
        case .cannotReceive: return "cannot receive hidraw events: USB keys plugged in later will not be seen"
        }
    }
}
