import Glibc
import HIDReports
import Synchronization
import SystemKit

/// A key served on a Unix `SOCK_SEQPACKET` socket: each message is one
/// 64-byte CTAPHID report, without a report-ID byte, both ways
/// (authkeyd(8), `--attach`; authkeyd-virtkey(1), `--socket`).
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
        // One report, one datagram: a seqpacket socket takes all of it or fails.
        let sent = try? report.withUnsafeBytes { (bytes) throws(SystemError) in try UnixSocket.send(fd, bytes) }
        if sent == report.count { return true }
        hungUp.store(true, ordering: .releasing)
        return false
    }

    public func receive(timeoutMilliseconds: Int) -> [UInt8]? {
        guard !isHungUp, !closed.load(ordering: .acquiring) else { return nil }
        guard (try? waitUntilReadable(fd, timeoutMilliseconds: timeoutMilliseconds)) == true else { return nil }
        // One byte more than a report, so an oversized message shows as such
        // instead of being silently truncated to a plausible one.
        var report = [UInt8](repeating: 0, count: hidReportSize + 1)
        let received: Int?
        do {
            received = try report.withUnsafeMutableBytes { (buffer) throws(SystemError) in
                try UnixSocket.receive(fd, into: buffer, nonBlocking: true)
            }
        } catch {
            hungUp.store(true, ordering: .releasing)
            return nil
        }
        // nil: poll woke without a message after all (nothing else reads
        // this socket); the caller asks again.
        guard let count = received else { return nil }
        if count == hidReportSize { return Array(report.prefix(hidReportSize)) }
        if count == 0 { hungUp.store(true, ordering: .releasing) }
        return nil
    }

    /// Blocks until the server hangs up (or `close()` is called), without
    /// reading: libfido2 keeps the data. For a host that must notice a
    /// vanished key at once, not at its next request.
    public func waitUntilHungUp() {
        while !isHungUp && !closed.load(ordering: .acquiring) {
            // Asking only for POLLRDHUP: data stays for libfido2, and
            // `close()` wakes us with POLLHUP through its shutdown.
            var descriptors = [pollfd(fd: fd, events: pollReadHangUp, revents: 0)]
            guard let ready = try? waitForEvents(&descriptors, timeoutMilliseconds: -1) else { break }
            if ready > 0 && descriptors[0].revents & (Int16(POLLHUP | POLLERR | POLLNVAL) | pollReadHangUp) != 0 { break }
        }
        hungUp.store(true, ordering: .releasing)
    }

    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) {
            // shutdown first wakes any thread blocked on the descriptor. Its
            // failure (the peer already gone: ENOTCONN) leaves nothing to wake.
            try? UnixSocket.shutdown(fd)
            FileDescriptor.close(fd)
        }
    }
}
