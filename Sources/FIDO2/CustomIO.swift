internal import CFido2
import HIDReports
import Synchronization
import SystemKit

/// Hands a connection to libfido2's `open` callback, which receives only a path.
///
/// `Device.open(connection:)` files the connection under a unique pseudo-path
/// for the length of `fido_dev_open`; the callback takes it out again.
enum PendingConnections {
    private static let table = Protected<(next: UInt64, byPath: [String: PendingConnection])>((0, [:]))

    static func file(_ connection: any HIDReportConnection, state handleState: HandleState) -> String {
        table.withLock { state in
            state.next += 1
            let path = "authkeyd-custom-io:\(state.next)"
            state.byPath[path] = PendingConnection(connection: connection, state: handleState)
            return path
        }
    }

    static func take(_ path: String) -> PendingConnection? {
        table.withLock { $0.byPath.removeValue(forKey: path) }
    }
}

/// A connection on its way to libfido2's `open` callback.
struct PendingConnection {
    let connection: any HIDReportConnection
    let state: HandleState
}

/// One `Device`'s side of its custom I/O: whether closing the handle
/// closes the connection, and what the key's replies said that libfido2
/// does not tell its caller.
///
/// A key busy with another host's transaction answers a request with
/// CTAPHID ERROR `ERR_CHANNEL_BUSY`; libfido2 reads that as a reply to the
/// wrong command and fails with `FIDO_ERR_RX`, the code it gives garbled
/// or lost replies too. Seen here, it becomes `FIDO2Error.channelBusy`,
/// which the caller can wait out (`Device.perform`).
final class HandleState: Sendable {
    /// False while the handle is only being opened again on the same
    /// connection (`Device.reopen()`), or when the connection is someone
    /// else's to close.
    let closesConnection: Atomic<Bool>
    /// The channel of the last frame written: the key's answer to it comes on it.
    private let channel = Atomic<UInt32>(0)
    private let sawChannelBusy = Atomic<Bool>(false)

    init(closesConnection: Bool) { self.closesConnection = Atomic(closesConnection) }

    func wrote(_ frame: UnsafePointer<UInt8>) {
        channel.store(Self.channel(frame), ordering: .relaxed)
    }

    func read(_ frame: UnsafePointer<UInt8>) {
        // CTAPHID ERROR is 0x3F, with the initialisation-frame bit 0x80;
        // ERR_CHANNEL_BUSY is 0x06 (CTAP 2.1 §11.2.9.1.6, §11.2.4).
        guard frame[4] == 0xBF, frame[7] == 0x06, Self.channel(frame) == channel.load(ordering: .relaxed) else { return }
        sawChannelBusy.store(true, ordering: .relaxed)
    }

    /// Whether a busy answer came since the last call; clears it.
    func takeChannelBusy() -> Bool { sawChannelBusy.exchange(false, ordering: .relaxed) }

    private static func channel(_ frame: UnsafePointer<UInt8>) -> UInt32 {
        UInt32(frame[0]) << 24 | UInt32(frame[1]) << 16 | UInt32(frame[2]) << 8 | UInt32(frame[3])
    }
}

/// The handle libfido2 keeps between `open` and `close`.
private final class ConnectionHandle {
    let pending: PendingConnection
    init(_ pending: PendingConnection) { self.pending = pending }
}

/// libfido2's I/O callbacks. libfido2 1.12 calls `write` with 65 bytes
/// (report ID 0, then the frame) and wants 65 back, and `read` with 64,
/// wanting exactly 64 or -1 (its `src/io.c`).
let customIOFunctions = fido_dev_io_t(
    open: { path in
        guard let path, let pending = PendingConnections.take(String(cString: path)) else { return nil }
        return Unmanaged.passRetained(ConnectionHandle(pending)).toOpaque()
    },
    close: { handle in
        guard let handle else { return }
        let box = Unmanaged<ConnectionHandle>.fromOpaque(handle).takeRetainedValue()
        if box.pending.state.closesConnection.load(ordering: .acquiring) { box.pending.connection.close() }
    },
    read: { handle, buffer, length, milliseconds in
        guard let handle, let buffer, length >= hidReportSize else { return -1 }
        let box = Unmanaged<ConnectionHandle>.fromOpaque(handle).takeUnretainedValue()
        guard let report = box.pending.connection.receive(timeoutMilliseconds: Int(milliseconds)),
            report.count == hidReportSize
        else { return -1 }
        report.withUnsafeBufferPointer { frame in
            buffer.update(from: frame.baseAddress!, count: hidReportSize)
            box.pending.state.read(frame.baseAddress!)
        }
        return Int32(hidReportSize)
    },
    write: { handle, buffer, length in
        guard let handle, let buffer, length == hidReportSize + 1 else { return -1 }
        let box = Unmanaged<ConnectionHandle>.fromOpaque(handle).takeUnretainedValue()
        box.pending.state.wrote(buffer + 1)
        let report = Array(UnsafeBufferPointer(start: buffer + 1, count: hidReportSize))
        return box.pending.connection.send(report: report) ? Int32(length) : -1
    }
)
