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
        fd = try retryingOnInterrupt("open \(Self.path)") { open(Self.path, O_RDWR | O_CLOEXEC) }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let error = SystemError("pipe")
            close(fd)
            throw error
        }
        wakeReader = pipeEnds[0]
        wakeWriter = pipeEnds[1]
        _ = fcntl(wakeReader, F_SETFD, FD_CLOEXEC)
        _ = fcntl(wakeWriter, F_SETFD, FD_CLOEXEC)
    }

    deinit {
        close(fd)
        close(wakeReader)
        close(wakeWriter)
    }

    /// Writes one event; the kernel acts on it before the call returns.
    func send(_ event: UHIDDeviceEvent) throws(SystemError) {
        let bytes = event.bytes
        try retryingOnInterrupt("write \(Self.path)") { write(fd, bytes, bytes.count) }
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
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if descriptors[1].revents != 0 { return nil }
            if descriptors[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return nil }
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return nil
            }
            if let event = UHIDKernelEvent(bytes: buffer.prefix(count)) { return event }
        }
    }

    /// Ends the wait in `nextEvent()`, now and for every later call.
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }
}
