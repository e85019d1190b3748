import AuthProtocol
import Dispatch
import FIDO2
import Glibc
import SystemKit

/// Follows one `--attach unix:PATH` key: connects when its socket appears
/// (inotify on the directory, no polling), and takes the key out of
/// service when the server hangs up, to bring it back when it returns.
final class AttachedKeyWatcher: @unchecked Sendable {
    // Mutable state is touched only on the broker's queue.
    let path: String
    private let broker: Broker
    private let inotify: Int32
    private var source: (any DispatchSourceRead)?
    private var connected = false
    private var connecting = false
    /// A socket file that refuses connections may be one its server has
    /// bound but not yet listened on (inotify reports the bind): retries
    /// 10 ms apart, for half a second at most, bridge that gap. A file
    /// still refusing after that is a stale one; the next event retries.
    private var refusedRetries = 0
    private static let maxRefusedRetries = 50

    init(path: String, broker: Broker) throws(SystemError) {
        self.path = path
        self.broker = broker
        inotify = try DirectoryWatch.open(FileSystem.directory(containing: path), events: UInt32(IN_CREATE | IN_MOVED_TO | IN_ATTRIB))
    }

    /// Starts watching; connects at once if the socket is already there.
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: inotify, queue: broker.queue)
        source.setEventHandler { [weak self] in self?.directoryChanged() }
        source.setCancelHandler { [inotify] in FileDescriptor.close(inotify) }
        self.source = source
        source.resume()
        broker.queue.async { [weak self] in self?.tryConnect() }
    }

    func stop() {
        source?.cancel()
        source = nil
    }

    private func directoryChanged() {
        // The events themselves are drained; what matters is whether the
        // socket now accepts a connection. Drained until none is left (nil)
        // or reading fails, which the connection attempt shows for itself.
        var buffer = [UInt8](repeating: 0, count: 4096)
        while let count = try? buffer.withUnsafeMutableBytes({ try FileDescriptor.read(inotify, into: $0) }), count > 0 {}
        refusedRetries = 0
        tryConnect()
    }

    private func tryConnect() {
        guard !connected, !connecting, source != nil else { return }
        let connection: SocketConnection
        do {
            connection = try SocketConnection(path: path)
        } catch {
            if error.code == ECONNREFUSED && refusedRetries < Self.maxRefusedRetries {
                refusedRetries += 1
                broker.queue.asyncAfter(deadline: .now() + .milliseconds(10)) { [weak self] in self?.tryConnect() }
            }
            return
        }
        refusedRetries = 0
        connecting = true
        broker.startTask { await self.bringUp(connection) }
    }

    private func bringUp(_ connection: SocketConnection) async {
        let path = path
        let key = await broker.bringUp(
            transport: .socket, path: "unix:\(path)", manufacturer: "", product: "CTAPHID socket key"
        ) { () throws(FIDO2Error) -> Device in
            // The socket stays connected between opens (its hang-up is
            // the key's removal); only the channel is new each time.
            try Device.open(connection: connection, name: "unix:\(path)", closesConnection: false)
        }
        broker.queue.async { [self] in
            connecting = false
            guard let key else {
                connection.close()
                return
            }
            connected = true
            // A thread that only waits for the server to hang up.
            startThread(name: "hangup-\(key.id)") { [self] in
                connection.waitUntilHungUp()
                broker.startTask { [self] in
                    await broker.takeDown(key)
                    connection.close()
                    broker.queue.async { [self] in
                        connected = false
                        tryConnect()
                    }
                }
            }
        }
    }
}
