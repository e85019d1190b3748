import AuthProtocol
import SystemKit

/// The plainest client of authkeyd: one blocking socket, one call at a
/// time, on the caller's thread.
///
/// For a program that asks one thing and exits (`authctl list`, `authctl
/// info`). `AuthClient` starts a reader thread and runs on Swift's
/// executors, which a command that makes a single call pays for at
/// start-up in threads, stacks and runtime metadata: more than the call
/// itself costs. This one starts nothing. The daemon's prompts are
/// answered `cancel`, as `AuthClient` answers them without a handler, and
/// its notifications are skipped.
public final class BlockingClient {
    private let fd: Int32
    private var framer = LineFramer(maxLineLength: 64 << 20)
    /// Lines read beyond the one that answered a call: they belong to the
    /// next `call`.
    private var unread: [JSONValue] = []
    private var nextID: Int64 = 1
    /// What each read lands in, kept: bench row 1 measures the daemon
    /// through this client, and a fresh zeroed buffer per read would be
    /// counted against the daemon.
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    public init(socketPath: String) throws(AuthClientError) {
        do {
            fd = try UnixSocket.connect(path: socketPath, kind: .stream)
        } catch {
            throw .cannotConnect(path: socketPath, error)
        }
    }

    /// A client over a stream socket already connected to a broker (one
    /// end of a `socketpair`, as tests use); it owns and closes `fd`.
    public init(connectedDescriptor fd: Int32) {
        self.fd = fd
    }

    deinit { FileDescriptor.close(fd) }

    /// Calls a method with raw JSON params and returns the raw result.
    public func call(_ method: String, params: JSONValue? = nil) throws(AuthClientError) -> JSONValue {
        let id = RPCID.number(nextID)
        nextID += 1
        send(.request(id: id, method: method, params: params))
        // Read even when the send failed: a daemon that refused this
        // connection sent its reason (an error with no id) and closed it,
        // and that reason, not "disconnected", is the answer.
        while true {
            switch try nextMessage() {
            case .response(id, let result):
                return result
            case .errorResponse(let errorID, let error) where errorID == id || errorID == nil:
                // No id: the daemon refused the connection itself.
                throw .daemon(error)
            case .request(let promptID, _, _):
                send(.response(id: promptID, result: ["action": "cancel"]))
            case .response, .errorResponse, .notification:
                continue
            }
        }
    }

    /// A result read as the protocol's type.
    public func decode<Result: Decodable>(_ type: Result.Type, of method: String, from result: JSONValue) throws(AuthClientError) -> Result {
        try decodeResult(type, of: method, from: result)
    }

    /// A failed send means the daemon closed the connection: the reads
    /// that follow find its last words, then the end.
    private func send(_ message: RPCMessage) {
        _ = try? UnixSocket.sendAll(fd, message.line())
    }

    private func nextMessage() throws(AuthClientError) -> RPCMessage {
        while unread.isEmpty { try receive() }
        let json = unread.removeFirst()
        do { return try RPCMessage.parse(json) } catch {
            throw .protocolViolation("\(error)")
        }
    }

    /// Reads what the socket has and frames it into `unread`.
    private func receive() throws(AuthClientError) {
        let outcome = try? buffer.withUnsafeMutableBytes { (raw) throws(SystemError) in try UnixSocket.receive(fd, into: raw) }
        guard let count = outcome ?? nil, count > 0 else { throw .disconnected }
        var failure: AuthClientError?
        buffer.withUnsafeBytes { raw in
            framer.feed(UnsafeRawBufferPointer(rebasing: raw[0..<count])) { event in
                switch event {
                case .line(let line):
                    do { unread.append(try JSONParser().parse(line)) } catch {
                        failure = .protocolViolation("\(error)")
                    }
                case .lineTooLong:
                    failure = .protocolViolation("a line longer than 64 MiB")
                }
            }
        }
        if let failure { throw failure }
    }
}
