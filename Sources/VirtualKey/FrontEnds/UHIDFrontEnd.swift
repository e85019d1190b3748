import Glibc
import SystemKit

/// Serves a virtual key as a kernel HID device, through `/dev/uhid`: the
/// key appears as `/dev/hidrawN` to every program on the machine (libfido2,
/// browsers, authkeyd's USB path) as a plugged-in USB key would.
///
/// Programs' writes to the hidraw node arrive as `UHID_OUTPUT` events and
/// go to the key's CTAPHID layer; its replies go back as `UHID_INPUT2`
/// reports, which the kernel hands to every program reading the node (as
/// on USB, CTAPHID channels keep them apart). `stop()`, unplugging the
/// key, or the process ending removes the device: an unplug. Plugging the
/// key back in creates it again.
///
/// Needs the `uhid` module and write access to `/dev/uhid` (root).
public final class UHIDFrontEnd: Sendable {
    public let identity: UHIDDeviceIdentity
    private let key: VirtualKey
    /// The open device file and the port replies go through, while started.
    private let serving = Protected<(device: UHIDDevice, port: UHIDHostPort)?>(nil)

    public init(key: VirtualKey, identity: UHIDDeviceIdentity? = nil) {
        self.key = key
        self.identity = identity ?? .virtualKey(productName: key.configuration.productName)
        key.onUnplug { [weak self] in self?.sendToDevice(.destroy) }
        key.onPlugIn { [weak self] in
            guard let self else { return }
            sendToDevice(.create(self.identity, reportDescriptor: FIDOHIDDevice.reportDescriptor))
        }
    }

    /// Creates the HID device and serves it on a thread of its own; does
    /// nothing when already started. Fails when `/dev/uhid` cannot be
    /// opened (no `uhid` module, not root) or the kernel refuses the device.
    public func start() throws(SystemError) {
        try serving.withLock { state throws(SystemError) in
            guard state == nil else { return }
            let device = try UHIDDevice()
            if key.isPluggedIn {
                try device.send(.create(identity, reportDescriptor: FIDOHIDDevice.reportDescriptor))
            }
            let port = UHIDHostPort(device: device)
            state = (device, port)
            startThread(name: "vkey-uhid") { [self] in serve(device, port: port) }
        }
    }

    /// Removes the HID device (an unplug) and stops serving.
    public func stop() {
        guard let (device, port) = serving.withLock({ state in defer { state = nil }; return state }) else { return }
        try? device.send(.destroy)
        device.wake()
        key.transport.portClosed(port)
    }

    private func sendToDevice(_ event: UHIDDeviceEvent) {
        serving.withLock { state in _ = try? state?.device.send(event) }
    }

    /// Answers the kernel's events until `stop()`.
    private func serve(_ device: UHIDDevice, port: UHIDHostPort) {
        while let event = device.nextEvent() {
            switch event {
            case .output(let data, .output):
                guard key.isPluggedIn, let report = FIDOHIDDevice.ctaphidReport(fromOutput: data) else { continue }
                key.transport.receive(report: report, from: port)
            case .close:
                // The last program closed the hidraw node: what it started ends.
                key.transport.portClosed(port)
            case .getReport(let id, _, _):
                // A FIDO key has no feature reports. Answer at once: the
                // caller would otherwise wait for the kernel's timeout.
                try? device.send(.getReportReply(id: id, error: UInt16(EIO), data: []))
            case .setReport(let id, _, _, _):
                try? device.send(.setReportReply(id: id, error: UInt16(EIO)))
            case .start, .stop, .open, .output, .unknown:
                break
            }
        }
        key.transport.portClosed(port)
    }
}

/// The programs using the hidraw node, as one host of the key: replies go
/// to the kernel as input reports.
final class UHIDHostPort: HostPort {
    private let device: UHIDDevice

    init(device: UHIDDevice) { self.device = device }

    func deliver(report: [UInt8]) {
        // Fails only once the device is gone; the report is lost, as on USB.
        try? device.send(.input(data: report))
    }
}
