import Dispatch
import Synchronization

/// A host connected to the key: an in-process libfido2 connection, a socket
/// client, or a UHID device node.
public protocol HostPort: AnyObject, Sendable {
    /// Hands one 64-byte report to the host. Must not block: as on USB, a
    /// host that does not read loses reports.
    func deliver(report: [UInt8])
}

/// What a CTAP2 command sees of the transport while it runs: whether the
/// host cancelled, and a way to send KEEPALIVE frames while it waits.
public final class CommandContext: Sendable {
    let transactionID: UInt64
    private let cancelled = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let sendKeepalive: @Sendable (KeepaliveStatus) -> Void

    init(transactionID: UInt64, sendKeepalive: @escaping @Sendable (KeepaliveStatus) -> Void) {
        self.transactionID = transactionID
        self.sendKeepalive = sendKeepalive
    }

    /// A context for commands run without a transport (unit tests, fuzzing).
    public static func detached() -> CommandContext {
        CommandContext(transactionID: 0, sendKeepalive: { _ in })
    }

    /// Whether the host sent CTAPHID_CANCEL for this request, or went away.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
        wakeUp.signal()
    }

    /// Tells the host the key is still busy (CTAPHID_KEEPALIVE).
    public func keepalive(_ status: KeepaliveStatus) {
        if !isCancelled { sendKeepalive(status) }
    }

    /// Sleeps up to `milliseconds`, waking early on cancel or `wake()`.
    /// Returns false when the request was cancelled.
    @discardableResult
    func pause(milliseconds: Int) -> Bool {
        _ = wakeUp.wait(timeout: .now() + .milliseconds(max(0, milliseconds)))
        return !isCancelled
    }

    /// Ends a `pause` early (a touch arrived).
    func wake() { wakeUp.signal() }
}
