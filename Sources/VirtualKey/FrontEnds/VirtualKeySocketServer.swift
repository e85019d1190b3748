import Glibc
import Synchronization
import SystemKit

/// Serves a virtual key on a Unix `SOCK_SEQPACKET` socket: one 64-byte
/// CTAPHID report per message, no report-ID byte, both ways
/// (authkeyd-virtkey(1), `--socket`; authkeyd(8), `--attach`).
///
/// Any number of hosts may connect. CTAPHID channels keep them apart and each
/// reply goes back on the connection that asked; a host that disconnects
/// mid-message leaves the key working for the others. Unplugging the key
/// drops every host and stops listening, as pulling a USB key would;
/// plugging it back in serves the socket again.
public final class VirtualKeySocketServer: Sendable {
    public let path: String
    private let key: VirtualKey
    private let listener = Protected<Int32?>(nil)
    private let clients = Protected<[ObjectIdentifier: SocketHostPort]>([:])
    /// Started and not stopped by its owner: serve again after a replug.
    private let wanted = Atomic<Bool>(false)

    public init(key: VirtualKey, path: String) {
        self.key = key
        self.path = path
        key.onUnplug { [weak self] in self?.closeListener() }
        key.onPlugIn { [weak self] in
            guard let self, wanted.load(ordering: .acquiring) else { return }
            try? listen()
        }
    }

    /// Binds the socket (replacing a stale socket file, refusing a live one)
    /// and starts accepting hosts on a thread of its own.
    public func start() throws(SystemError) {
        try listen()
        wanted.store(true, ordering: .releasing)
    }

    private func listen() throws(SystemError) {
        if UnixSocket.isListening(path: path, kind: .seqPacket) {
            throw SystemError("another virtual key is already serving \(path)", code: EADDRINUSE)
        }
        try FileSystem.removeFile(path)
        let fd = try UnixSocket.listen(path: path, kind: .seqPacket)
        listener.withLock { $0 = fd }
        startThread(name: "vkey-accept") { [self] in acceptLoop(fd) }
    }

    /// Stops listening, removes the socket file and drops every host.
    public func stop() {
        wanted.store(false, ordering: .releasing)
        closeListener()
    }

    private func closeListener() {
        if let fd = listener.withLock({ state -> Int32? in defer { state = nil }; return state }) {
            // shutdown wakes the thread blocked in accept. Nothing here can
            // fail but on a bug: the listener is ours, and so is the file,
            // which only the next start would trip over (and replace).
            try? UnixSocket.shutdown(fd)
            FileDescriptor.close(fd)
            try? FileSystem.removeFile(path)
        }
        let dropped = clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        dropped.forEach { $0.hangUp() }
    }

    /// How many hosts are connected now.
    public var clientCount: Int { clients.withLock { $0.count } }

    private func acceptLoop(_ listenerFD: Int32) {
        while true {
            let fd: Int32?
            do { fd = try UnixSocket.accept(listenerFD) } catch { return }
            guard let fd else { continue }
            guard key.isPluggedIn else {
                FileDescriptor.close(fd)
                continue
            }
            let port = SocketHostPort(fd: fd)
            clients.withLock { $0[ObjectIdentifier(port)] = port }
            startThread(name: "vkey-host") { [self] in serve(port) }
        }
    }

    /// Reads the host's reports until it hangs up.
    private func serve(_ port: SocketHostPort) {
        var report = [UInt8](repeating: 0, count: CTAPHID.reportSize + 1)
        while true {
            // A receive error ends the connection as surely as end-of-file.
            guard let count = try? report.withUnsafeMutableBytes({ try UnixSocket.receive(port.fd, into: $0) }),
                count > 0
            else { break }
            // A message that is not exactly one report is not CTAPHID; drop it.
            guard count == CTAPHID.reportSize else { continue }
            key.transport.receive(report: Array(report.prefix(CTAPHID.reportSize)), from: port)
        }
        key.transport.portClosed(port)
        _ = clients.withLock { $0.removeValue(forKey: ObjectIdentifier(port)) }
        port.close()
    }
}

/// One connected host.
final class SocketHostPort: HostPort {
    let fd: Int32
    private let closed = Atomic<Bool>(false)

    init(fd: Int32) { self.fd = fd }

    func deliver(report: [UInt8]) {
        guard !closed.load(ordering: .acquiring) else { return }
        // Never block the key on a host that does not read: a report it has
        // no room for is lost, as on a USB key whose host stopped polling; a
        // host gone is seen by the serving thread.
        _ = try? report.withUnsafeBytes { try UnixSocket.send(fd, $0, nonBlocking: true) }
    }

    /// Ends the connection; the serving thread sees end-of-file and cleans up.
    func hangUp() {
        // Fails only if the host is already gone, which is what was wanted.
        try? UnixSocket.shutdown(fd)
    }

    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { FileDescriptor.close(fd) }
    }
}
