internal import CFido2
import HIDReports
import SystemKit

/// Hands a connection to libfido2's `open` callback, which receives only a path.
///
/// `Device.open(connection:)` files the connection under a unique pseudo-path
/// for the length of `fido_dev_open`; the callback takes it out again.
enum PendingConnections {
    private static let table = Protected<(next: UInt64, byPath: [String: any HIDReportConnection])>((0, [:]))

    static func file(_ connection: any HIDReportConnection) -> String {
        table.withLock { state in
            state.next += 1
            let path = "authkeyd-custom-io:\(state.next)"
            state.byPath[path] = connection
            return path
        }
    }

    static func take(_ path: String) -> (any HIDReportConnection)? {
        table.withLock { $0.byPath.removeValue(forKey: path) }
    }

    /// Connections whose libfido2 handle is being closed only to be opened
    /// again (`Device.reopen()`): the close callback leaves them up.
    private static let reopening = Protected<Set<ObjectIdentifier>>([])

    static func keepingOpen(_ connection: any HIDReportConnection, _ close: () -> Void) {
        reopening.withLock { _ = $0.insert(ObjectIdentifier(connection)) }
        defer { reopening.withLock { _ = $0.remove(ObjectIdentifier(connection)) } }
        close()
    }

    static func isBeingReopened(_ connection: any HIDReportConnection) -> Bool {
        reopening.withLock { $0.contains(ObjectIdentifier(connection)) }
    }
}

/// The handle libfido2 keeps between `open` and `close`.
private final class ConnectionHandle {
    let connection: any HIDReportConnection
    init(_ connection: any HIDReportConnection) { self.connection = connection }
}

/// libfido2's I/O callbacks. Per LIBFIDO2-NOTES.md: `write` receives 65 bytes
/// (report ID 0, then the frame) and must return 65; `read` must return
/// exactly 64 bytes or -1.
let customIOFunctions = fido_dev_io_t(
    open: { path in
        guard let path, let connection = PendingConnections.take(String(cString: path)) else { return nil }
        return Unmanaged.passRetained(ConnectionHandle(connection)).toOpaque()
    },
    close: { handle in
        guard let handle else { return }
        let box = Unmanaged<ConnectionHandle>.fromOpaque(handle).takeRetainedValue()
        if !PendingConnections.isBeingReopened(box.connection) { box.connection.close() }
    },
    read: { handle, buffer, length, milliseconds in
        guard let handle, let buffer, length >= hidReportSize else { return -1 }
        let box = Unmanaged<ConnectionHandle>.fromOpaque(handle).takeUnretainedValue()
        guard let report = box.connection.receive(timeoutMilliseconds: Int(milliseconds)),
            report.count == hidReportSize
        else { return -1 }
        report.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: hidReportSize) }
        return Int32(hidReportSize)
    },
    write: { handle, buffer, length in
        guard let handle, let buffer, length == hidReportSize + 1 else { return -1 }
        let box = Unmanaged<ConnectionHandle>.fromOpaque(handle).takeUnretainedValue()
        let report = Array(UnsafeBufferPointer(start: buffer + 1, count: hidReportSize))
        return box.connection.send(report: report) ? Int32(length) : -1
    }
)
