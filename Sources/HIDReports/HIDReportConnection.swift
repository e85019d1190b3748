/// A HID-report pipe to an authenticator that libfido2 does not open itself:
/// an in-process virtual key, or a key served on a socket.
///
/// It lives apart from FIDO2 so that the virtual key can offer one without
/// linking libfido2: FIDO2 drives it (through `fido_dev_set_io_functions`,
/// exactly as it drives a hidraw node, so every CTAPHID frame still passes
/// through libfido2's own framing and checks), VirtualKey serves it.
///
/// `send` and `receive` may be called from different threads at once:
/// `fido_dev_cancel` writes a CANCEL frame while another thread waits in a
/// read.
public protocol HIDReportConnection: AnyObject, Sendable {
    /// Sends one 64-byte CTAPHID report. Returns false when the device is gone.
    func send(report: [UInt8]) -> Bool
    /// Waits up to `timeoutMilliseconds` (negative: without limit) for one
    /// 64-byte report. Returns nil on timeout or when the device is gone.
    func receive(timeoutMilliseconds: Int) -> [UInt8]?
    /// Releases the connection; libfido2 calls it from `fido_dev_close`.
    func close()
}

/// The size of a CTAPHID report on the wire, without the report-ID byte.
public let hidReportSize = 64
