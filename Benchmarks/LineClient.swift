import AuthProtocol
import Glibc
import SystemKit

/// The plainest JSON-RPC client there is: one blocking Unix socket, one
/// request at a time, the project's own JSON both ways. The daemon's
/// prompts are declined and its notifications skipped.
///
/// What it costs over the daemon's own work is what any client pays: one
/// request serialised, every line it receives parsed.
final class LineClient {
    let fd: Int32
    private var pending: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    private var nextID: Int64 = 1

    init(path: String) throws {
        fd = try UnixSocket.connect(path: path, kind: .stream)
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws {
        try UnixSocket.sendAll(fd, bytes)
    }

    /// The next line, without its newline; blocks.
    func readLine() throws -> [UInt8] {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                return line
            }
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw BenchError("authkeyd closed the connection") }
            pending.append(contentsOf: scratch[0..<count])
        }
    }

    func readMessage() throws -> RPCMessage {
        let line = try readLine()
        do {
            return try RPCMessage.parse(try JSONParser().parse(line))
        } catch {
            throw BenchError("unreadable line from authkeyd: \(error)")
        }
    }

    /// Calls a method and waits for its result.
    func call(_ method: String, _ params: JSONValue? = nil) throws -> JSONValue {
        let id = RPCID.number(nextID)
        nextID += 1
        try send(RPCMessage.request(id: id, method: method, params: params).line())
        while true {
            switch try readMessage() {
            case .response(id, let result):
                return result
            case .errorResponse(let errorID, let error) where errorID == id || errorID == nil:
                throw BenchError("\(method): \(error)")
            case .request(let promptID, _, _):
                // A prompt (ui.describeAuthenticator after a registration): decline.
                try send(RPCMessage.response(id: promptID, result: ["action": "cancel"]).line())
            default:
                continue
            }
        }
    }
}
