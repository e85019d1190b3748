import HIDReports
import Synchronization
import SystemKit

/// The in-process front end: a `HIDReportConnection` that libfido2 drives
/// through its custom I/O, reaching the virtual key in this process with
/// no socket in between.
public final class InProcessConnection: HIDReportConnection, HostPort {
    private let key: VirtualKey
    private let inbox = BlockingQueue<[UInt8]>()
    private let closed = Atomic<Bool>(false)

    init(key: VirtualKey) {
        self.key = key
    }

    /// A host that lets go without closing still goes away properly.
    deinit { close() }

    // HIDReportConnection: the host's side.

    public func send(report: [UInt8]) -> Bool {
        guard !closed.load(ordering: .acquiring), key.isPluggedIn else { return false }
        key.transport.receive(report: report, from: self)
        return true
    }

    public func receive(timeoutMilliseconds: Int) -> [UInt8]? {
        guard !closed.load(ordering: .acquiring), key.isPluggedIn else { return nil }
        return inbox.pop(timeoutMilliseconds: timeoutMilliseconds)
    }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        key.transport.portClosed(self)
        key.forget(self)
        inbox.close()
    }

    // HostPort: the key's side.

    public func deliver(report: [UInt8]) {
        inbox.push(report)
    }

    /// The key was unplugged: wake a waiting reader so it fails at once.
    func unplugged() {
        inbox.close()
    }
}
