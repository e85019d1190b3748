import AuthProtocol
import Glibc
import SystemKit

/// A notification from the daemon.
public struct DaemonNotification: Sendable, Equatable {
    public var method: String
    public var params: JSONValue
}

/// A connection to authkeyd: JSON-RPC 2.0 over its Unix socket, both ways.
///
/// Calls are `async` and correlated by id; notifications arrive on
/// `notifications`; the daemon's own requests (the UI handshake) go to the
/// `requestHandler`. One thread reads the socket; writes are serialised.
public final class AuthClient: Sendable {
    public typealias RequestHandler = @Sendable (_ method: String, _ params: JSONValue) async -> Result<JSONValue, RPCError>

    private let fd: Int32
    private let writeLock = Lock()
    private let state = Protected(State())
    private let notificationContinuation: AsyncStream<DaemonNotification>.Continuation
    /// Every notification the daemon sends, in order.
    public let notifications: AsyncStream<DaemonNotification>

    private struct State {
        var nextID: Int64 = 1
        var pending: [RPCID: CheckedContinuation<Result<JSONValue, AuthClientError>, Never>] = [:]
        var statusHandlers: [RPCID: @Sendable (OperationStatus) -> Void] = [:]
        var requestHandler: RequestHandler?
        var statusObserver: (@Sendable (OperationStatus) -> Void)?
        var closed = false
    }

    /// The socket path a client uses when none is given: `AUTHKEYD_SOCKET`,
    /// then the user instance's if it exists, then the system instance's.
    public static func defaultSocketPath(environment: [String: String]) -> String {
        if let explicit = environment["AUTHKEYD_SOCKET"], !explicit.isEmpty { return explicit }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, FileSystem.exists("\(runtime)/authkeyd.sock") {
            return "\(runtime)/authkeyd.sock"
        }
        return "/run/authkeyd/authkeyd.sock"
    }

    public convenience init(socketPath: String) throws(AuthClientError) {
        let fd: Int32
        do {
            fd = try UnixSocket.connect(path: socketPath, kind: .stream)
        } catch {
            throw .cannotConnect(path: socketPath, error)
        }
        self.init(connectedDescriptor: fd)
    }

    /// A client over a stream socket already connected to a broker: one
    /// end of a `socketpair` (a broker run in the same process, as tests
    /// do) or a descriptor a supervisor passed. The client owns `fd` and
    /// closes it.
    public init(connectedDescriptor fd: Int32) {
        self.fd = fd
        (notifications, notificationContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        startThread(name: "authclient-read") { [self] in readLoop() }
    }

    deinit {
        close()
        FileDescriptor.close(fd)
    }

    /// Receives every `operation.status`, whichever call it belongs to.
    public func setStatusObserver(_ observer: (@Sendable (OperationStatus) -> Void)?) {
        state.withLock { $0.statusObserver = observer }
    }

    /// Answers the daemon's requests (prompts). Without a handler they are
    /// answered with `cancel`.
    public func setRequestHandler(_ handler: RequestHandler?) {
        state.withLock { $0.requestHandler = handler }
    }

    /// Calls a method; `onStatus` receives the `operation.status`
    /// notifications that belong to this call, and `onStart` its request id
    /// (for `cancel(requestID:)`).
    public func call<Params: Encodable, Result: Decodable>(
        _ method: String, _ params: Params, as type: Result.Type,
        onStatus: (@Sendable (OperationStatus) -> Void)? = nil, onStart: ((Int64) -> Void)? = nil
    ) async throws(AuthClientError) -> Result {
        let json = try await call(method, params: try encodeParams(params), onStatus: onStatus, onStart: onStart)
        return try decodeResult(type, of: method, from: json)
    }

    /// Calls a method with raw JSON params and returns the raw result.
    public func call(
        _ method: String, params: JSONValue?, onStatus: (@Sendable (OperationStatus) -> Void)? = nil,
        onStart: ((Int64) -> Void)? = nil
    ) async throws(AuthClientError) -> JSONValue {
        let number = state.withLock { state -> Int64 in
            defer { state.nextID += 1 }
            if let onStatus { state.statusHandlers[.number(state.nextID)] = onStatus }
            return state.nextID
        }
        let id = RPCID.number(number)
        onStart?(number)
        let outcome: Swift.Result<JSONValue, AuthClientError> = await withCheckedContinuation { continuation in
            let accepted = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.pending[id] = continuation
                return true
            }
            guard accepted else { return continuation.resume(returning: .failure(closedError)) }
            silence.heard()
            // A failed send means the connection is gone; the reader sees
            // that too and fails every pending call, with the daemon's
            // reason if it gave one before closing (a refusal).
            if !send(.request(id: id, method: method, params: params)) { wakeReader() }
        }
        _ = state.withLock { $0.statusHandlers.removeValue(forKey: id) }
        return try outcome.get()
    }

    /// Cancels one of this client's calls still running (`operation.cancel`).
    public func cancel(requestID: Int64) async throws(AuthClientError) {
        _ = try await call(Method.cancelOperation, params: ["id": .integer(requestID)])
    }

    public func close() {
        let wasOpen = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        if wasOpen { wakeReader() }
    }

    /// Shuts the socket down, so that the read loop sees its end and fails
    /// what is pending. A failure means the socket is already shut down
    /// (the daemon went first): the reader has seen the end already.
    private func wakeReader() {
        try? UnixSocket.shutdown(fd)
    }

    // MARK: - Wire

    @discardableResult
    private func send(_ message: RPCMessage) -> Bool {
        let line = message.line()
        return writeLock.withLock { (try? UnixSocket.sendAll(fd, line)) != nil }
    }

    private func readLoop() {
        var framer = LineFramer(maxLineLength: 64 << 20)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        reading: while true {
            // A receive error is the connection's end, as end-of-file is.
            let outcome = try? buffer.withUnsafeMutableBytes { (raw) throws(SystemError) in try UnixSocket.receive(fd, into: raw) }
            guard let count = outcome ?? nil, count > 0 else { break }
            silence.heard()
            var broken = false
            buffer.withUnsafeBytes { raw in
                framer.feed(UnsafeRawBufferPointer(rebasing: raw[0..<count])) { event in
                    guard !broken else { return }
                    switch event {
                    case .line(let line): broken = !received(line)
                    case .lineTooLong: broken = true
                    }
                }
            }
            if broken { break reading }
        }
        let pending = state.withLock { state in
            defer {
                state.closed = true
                state.pending = [:]
            }
            return Array(state.pending.values)
        }
        pending.forEach { $0.resume(returning: .failure(closedError)) }
        silence.stop()
        notificationContinuation.finish()
        // The daemon sees the end now (this side may have ended it: a line
        // it broke the protocol with); the descriptor itself is closed
        // with the client (`deinit`), so that a prompt's answer that comes
        // after the end, or a `close()`, reaches this socket and fails,
        // never whatever the process opened under the same number since.
        try? UnixSocket.shutdown(fd)
    }

    /// Handles one line; false when the connection must close.
    private func received(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        let message: RPCMessage
        do { message = try RPCMessage.parse(line) } catch { return unreadable(error) }
        switch message {
        case .response(let id, let result):
            state.withLock { $0.pending.removeValue(forKey: id) }?.resume(returning: .success(result))
        case .errorResponse(let id, let error):
            if let id {
                state.withLock { $0.pending.removeValue(forKey: id) }?.resume(returning: .failure(.daemon(error)))
            } else {
                // An error for no request: the daemon refused the connection.
                refusal.withLock { $0 = error }
                let all = state.withLock { state in
                    defer { state.pending = [:] }
                    return Array(state.pending.values)
                }
                all.forEach { $0.resume(returning: .failure(.daemon(error))) }
            }
        case .notification(let method, let params):
            let params = params ?? .object([:])
            if method == Method.operationStatus, let status = try? JSONValueDecoder().decode(OperationStatus.self, from: params) {
                let (handler, observer) = state.withLock { state in
                    (RPCID(json: status.request).flatMap { state.statusHandlers[$0] }, state.statusObserver)
                }
                handler?(status)
                observer?(status)
            }
            notificationContinuation.yield(DaemonNotification(method: method, params: params))
        case .request(let id, let method, let params):
            let handler = state.withLock { $0.requestHandler }
            Task { [self] in
                // The daemon waits for this answer: its silence meanwhile
                // is not a frozen daemon's.
                silence.answering(true)
                defer { silence.answering(false) }
                let outcome = await handler?(method, params ?? .object([:]))
                    ?? .success(["action": "cancel"])
                switch outcome {
                case .success(let result): send(.response(id: id, result: result))
                case .failure(let error): send(.errorResponse(id: id, error: error))
                }
            }
        }
        return true
    }

    /// A line that is no JSON-RPC message. Dropped, it would leave the call
    /// it answers waiting for good: with an id, that call fails (or, if
    /// none is waiting for it, the daemon's broken request is answered
    /// with the error JSON-RPC asks for); without one, nothing says which
    /// call it answers, so every call fails and the connection closes, as
    /// a peer that breaks the protocol deserves. False when it must close.
    private func unreadable(_ malformed: MalformedMessage) -> Bool {
        let what = "a line that is not a JSON-RPC message (\(malformed.error.message))"
        if let id = malformed.id {
            if let waiting = state.withLock({ $0.pending.removeValue(forKey: id) }) {
                waiting.resume(returning: .failure(.protocolViolation("\(what) in answer to request \(id)")))
            } else {
                send(.errorResponse(id: id, error: malformed.error))
            }
            return true
        }
        violation.withLock { $0 = .protocolViolation("\(what), with no request id; the connection is closed") }
        return false
    }

    /// Why the daemon refused this connection, if it did.
    private let refusal = Protected<RPCError?>(nil)
    public var refusalReason: RPCError? { refusal.withLock { $0 } }

    /// Why this client closed the connection, if the daemon broke the
    /// protocol (`unreadable`).
    private let violation = Protected<AuthClientError?>(nil)

    /// What a call on a closed connection fails with: the protocol
    /// violation that closed it, or the daemon's reason for closing it when
    /// it gave one (a refusal), else `disconnected`.
    private var closedError: AuthClientError {
        if let limit = silence.gaveUp { return .notAnswering(limit) }
        return violation.withLock { $0 } ?? refusalReason.map { .daemon($0) } ?? .disconnected
    }

    /// When the daemon last spoke to this client, and whether the client
    /// gave up on it (`giveUpWhenSilent`).
    let silence = SilenceWatch()

    /// Whether a call of ours waits for the daemon.
    var isOwedAnAnswer: Bool { state.withLock { !$0.pending.isEmpty } }
}
