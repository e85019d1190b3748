import Glibc
import HIDReports
import Synchronization
import SystemKit

/// A key served on a Unix `SOCK_SEQPACKET` socket: each message is one
/// 64-byte CTAPHID report, without a report-ID byte, both ways
/// (PROTOCOL.md, "Attaching a key over a socket").
public final class SocketConnection: HIDReportConnection {
    private let fd: Int32
    private let closed = Atomic<Bool>(false)
    /// Set once the server hung up; later calls fail at once.
    private let hungUp = Atomic<Bool>(false)

    public init(path: String) throws(SystemError) {
        fd = try UnixSocket.connect(path: path, kind: .seqPacket)
    }

    deinit { close() }

    /// Whether the server has gone away.
    public var isHungUp: Bool { hungUp.load(ordering: .acquiring) }

    public func send(report: [UInt8]) -> Bool {
        guard report.count == hidReportSize, !isHungUp, !closed.load(ordering: .acquiring) else { return false }
        while true {
            let sent = Glibc.send(fd, report, report.count, Int32(MSG_NOSIGNAL))
            if sent == report.count { return true }
            if sent < 0 && errno == EINTR { continue }
            hungUp.store(true, ordering: .releasing)
            return false
        }
    }

    public func receive(timeoutMilliseconds: Int) -> [UInt8]? {
        guard !isHungUp, !closed.load(ordering: .acquiring) else { return nil }
        guard (try? waitUntilReadable(fd, timeoutMilliseconds: timeoutMilliseconds)) == true else { return nil }
        // One byte more than a report, so an oversized message shows as such
        // instead of being silently truncated to a plausible one.
        var report = [UInt8](repeating: 0, count: hidReportSize + 1)
        let count = recv(fd, &report, report.count, 0)
        if count == hidReportSize { return Array(report.prefix(hidReportSize)) }
        if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { hungUp.store(true, ordering: .releasing) }
        return nil
    }

    /// Blocks until the server hangs up (or `close()` is called), without
    /// reading: libfido2 keeps the data. For a host that must notice a
    /// vanished key at once, not at its next request.
    public func waitUntilHungUp() {
        while !isHungUp && !closed.load(ordering: .acquiring) {
            // Asking only for POLLRDHUP: data stays for libfido2, and
            // `close()` wakes us with POLLHUP through its shutdown.
            var descriptor = pollfd(fd: fd, events: pollReadHangUp, revents: 0)
            let ready = poll(&descriptor, 1, -1)
            if ready < 0 && errno != EINTR { break }
            if ready > 0 && descriptor.revents & (Int16(POLLHUP | POLLERR | POLLNVAL) | pollReadHangUp) != 0 { break }
        }
        hungUp.store(true, ordering: .releasing)
    }

    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) {
            // shutdown first wakes any thread blocked on the descriptor.
            shutdown(fd, Int32(SHUT_RDWR))
            Glibc.close(fd)
        }
    }
}
