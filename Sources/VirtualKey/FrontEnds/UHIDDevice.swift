import Glibc
import SystemKit

/// An open `/dev/uhid`: one kernel HID device, events in and out, and a
/// way to wake the thread that waits for events.
///
/// Closed when the last reference goes, so the reading thread and the
/// owner that stops it never close the descriptor under each other's feet.
/// Closing it removes the HID device, as the process ending does.
final class UHIDDevice: Sendable {
    static let path = "/dev/uhid"

    private let fd: Int32
    /// A pipe: a byte written to it ends `nextEvent()`.
    private let wakeReader: Int32
    private let wakeWriter: Int32

    init() throws(SystemError) {
        fd = try FileDescriptor.open(Self.path, O_RDWR | O_CLOEXEC)
        do {
            (wakeReader, wakeWriter) = try FileDescriptor.pipe()
        } catch {
            FileDescriptor.close(fd)
            throw error
        }
    }

    deinit {
        FileDescriptor.close(fd)
        FileDescriptor.close(wakeReader)
        FileDescriptor.close(wakeWriter)
    }

    /// Writes one event; the kernel acts on it before the call returns.
    func send(_ event: UHIDDeviceEvent) throws(SystemError) {
        try FileDescriptor.writeAll(fd, event.bytes)
    }

    /// Waits for the kernel's next event; nil once `wake()` was called or
    /// the device file failed.
    func nextEvent() -> UHIDKernelEvent? {
        var buffer = [UInt8](repeating: 0, count: UHIDLimits.eventSize)
        while true {
            var descriptors = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
            ]
            guard (try? waitForEvents(&descriptors, timeoutMilliseconds: -1)) != nil else { return nil }
            if descriptors[1].revents != 0 { return nil }
            if descriptors[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return nil }
            let count: Int?
            do { count = try buffer.withUnsafeMutableBytes { try FileDescriptor.read(fd, into: $0) } } catch { return nil }
            guard let count else { continue }
            if let event = UHIDKernelEvent(bytes: buffer.prefix(count)) { return event }
        }
    }

    /// Ends the wait in `nextEvent()`, now and for every later call.
    func wake() {
        // A pipe too full to take the byte already holds one that wakes the reader.
        _ = try? [UInt8(1)].withUnsafeBytes { try FileDescriptor.write(wakeWriter, $0) }
    }
}
