import AuthProtocol
import Glibc
import SystemKit

/// A client that sends whatever bytes a test likes and reads the daemon's
/// lines back: for bad input, and for many connections without threads.
public final class RawRPCClient {
    public let fd: Int32
    private var isOpen = true
    private var framer = LineFramer(maxLineLength: 64 << 20)
    private var lines: [JSONValue] = []
    public private(set) var closedByPeer = false

    public init(socketPath: String) throws {
        fd = try UnixSocket.connect(path: socketPath, kind: .stream)
    }

    /// A client over a stream socket already connected to a broker (one
    /// end of a `socketpair`); the client owns `fd` and closes it.
    public init(connectedDescriptor fd: Int32) {
        self.fd = fd
    }

    deinit { disconnect() }

    /// Closes the connection (once: a descriptor closed twice may be
    /// someone else's by the second time).
    public func disconnect() {
        guard isOpen else { return }
        isOpen = false
        close(fd)
    }

    /// Sends bytes as they are; false if the daemon has closed the connection.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        (try? UnixSocket.sendAll(fd, bytes)) != nil
    }

    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Sends one request line.
    public func request(_ id: Int, _ method: String, _ params: JSONValue? = nil) {
        send(RPCMessage.request(id: .number(Int64(id)), method: method, params: params).line())
    }

    /// The next line from the daemon, parsed; nil on timeout or close.
    public func readMessage(timeout: Duration = .seconds(5)) -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while lines.isEmpty {
            let remaining = (deadline - ContinuousClock.now).wholeMilliseconds
            guard remaining > 0, (try? waitUntilReadable(fd, timeoutMilliseconds: remaining)) == true else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else {
                closedByPeer = true
                return nil
            }
            buffer.withUnsafeBytes { raw in
                framer.feed(UnsafeRawBufferPointer(rebasing: raw[0..<count])) { event in
                    if case .line(let line) = event, let value = try? JSONParser().parse(line) { lines.append(value) }
                }
            }
        }
        return lines.removeFirst()
    }

    /// The next message that is not a notification.
    public func readReply(timeout: Duration = .seconds(5)) -> JSONValue? {
        while let message = readMessage(timeout: timeout) {
            if message["method"] == nil { return message }
        }
        return nil
    }

    /// The next request from the daemon (a prompt), past its notifications.
    public func readRequest(timeout: Duration = .seconds(5)) -> JSONValue? {
        while let message = readMessage(timeout: timeout) {
            if message["method"] != nil && message["id"] != nil { return message }
        }
        return nil
    }

    /// Whether the daemon closed the connection within the timeout.
    public func isClosedByPeer(within timeout: Duration = .seconds(5)) -> Bool {
        while readMessage(timeout: timeout) != nil {}
        return closedByPeer
    }
}
