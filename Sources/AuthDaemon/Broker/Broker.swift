import AuthProtocol
import Dispatch
import FIDO2
import Glibc
import SystemKit
import VirtualKey

/// The daemon's one place of mutable state: connected clients, the keys,
/// and the requests between them.
///
/// An actor on the daemon's Dispatch queue: socket and signal sources run
/// on that queue and enter it synchronously (`assumeIsolated`), and the
/// requests that wait on keys run as tasks on it, so there is a single
/// thread of control and no locks. Blocking libfido2 calls run on each
/// key's own worker thread.
///
/// The actor itself accepts clients, routes their requests (Routing.swift,
/// and a handler per family of methods in Methods/), finishes them, idles
/// and shuts down. An operation's steps (choosing a key, PIN and UV,
/// prompts, statuses) are the operation's own (Operations/Operation.swift),
/// run on this actor through an `isolated` parameter; its state is kept in
/// types that own it: `SessionTable`, `KeyRegistry`, `AgentRegistry`,
/// `RegistrationStore`.
public actor Broker {
    /// Where the broker runs, and the tasks around it (see `startTask`).
    public nonisolated let executor: QueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated var queue: DispatchQueue { executor.queue }

    let logger: Logger
    var configuration: DaemonConfiguration
    var policy: AccessPolicy
    let environment: [String: String]

    /// The connected clients (`SessionTable`).
    var sessions = SessionTable()
    /// The keys, their queues and their names (`KeyRegistry`).
    var keys = KeyRegistry()
    /// Registrations, per user; nil when the state directory is unusable.
    var store: RegistrationStore?
    var isShuttingDown = false
    /// `exit-idle`'s state (Lifecycle/IdleExit.swift).
    var idle = IdleTracking()
    /// The in-flight requests' time limits (RequestTimeLimits.swift).
    var timeLimits = RequestTimeLimits()
    /// The requesters' heartbeat (StatusRepeat.swift).
    var statusRepeat = StatusRepeat()
    /// Each user's session agent (`AgentRegistry`).
    var agents = AgentRegistry()
    /// The agents' callbacks, kept across runs; nil with the registrations'.
    var callbacks: AgentCallbackStore?
    /// The agents being called back (`AgentWakes`).
    var wakes = AgentWakes()
    /// What every client connection reads into.
    private let readBuffer = ReadBuffer()
    /// The connections with output to write after the current turn.
    private lazy var pendingOutput = PendingOutput(queue: queue)
    /// Which clients have input; made for the first client.
    private var readiness: ClientReadiness?

    /// The broker, with its registration store under the state directory
    /// (none, and an error in the log, when that directory cannot be made).
    public init(configuration: DaemonConfiguration, logger: Logger, environment: [String: String]) {
        executor = QueueExecutor(label: "authkeyd.broker")
        self.configuration = configuration
        self.logger = logger
        self.environment = environment
        policy = Self.policy(for: configuration, logger: logger)
        let stateDirectory = configuration.resolvedStateDirectory(environment: environment)
        let store = RegistrationStore(directory: stateDirectory + "/registrations", logger: logger, queue: executor.queue)
        do {
            try store.prepare()
            self.store = store
            callbacks = AgentCallbackStore(directory: stateDirectory, logger: logger)
        } catch {
            logger.error("registrations will not be kept: \(error) (set state-dir in authkeyd.conf)")
        }
    }

    /// The policy `configuration` calls for; a name that resolves to no
    /// user or group is left out, with a warning.
    static func policy(for configuration: DaemonConfiguration, logger: Logger) -> AccessPolicy {
        let policy = AccessPolicy(allowUsers: configuration.allowUsers, allowAdmins: configuration.allowAdmins)
        for name in policy.unresolved {
            logger.warning("allow-users/allow-admins: no user or group \"\(name)\"; ignored")
        }
        return policy
    }

    // MARK: - Clients

    /// A new connection, from the listener or to an agent's callback: check
    /// who it is, then serve it. The session, or nil when it is refused.
    @discardableResult
    func accept(_ fd: Int32) -> Session? {
        let readiness: ClientReadiness
        do {
            readiness = try self.readiness ?? ClientReadiness(queue: queue)
            self.readiness = readiness
        } catch {
            logger.error("cannot watch client connections: \(error)")
            FileDescriptor.close(fd)
            return nil
        }
        let connection = ClientConnection(
            fd: fd, queue: queue, readiness: readiness, readBuffer: readBuffer, pendingOutput: pendingOutput,
            maxLineLength: configuration.maxLineBytes)
        guard !isShuttingDown else {
            refuse(connection, RPCError(.shuttingDown, "authkeyd is shutting down"))
            return nil
        }
        guard let peer = try? PeerIdentity(socket: fd) else {
            refuse(connection, RPCError(.internalError, "cannot read the peer's credentials"))
            return nil
        }
        let rights = policy.rights(for: peer)
        guard rights.contains(.use) else {
            logger.notice("refused uid \(peer.uid) (pid \(peer.pid)): not allowed to use security keys")
            refuse(connection, RPCError(.permissionDenied, "uid \(peer.uid) may not use authkeyd (see allow-users in authkeyd.conf(5))"))
            return nil
        }
        guard sessions.count < configuration.maxClients else {
            logger.warning("refused uid \(peer.uid): \(configuration.maxClients) clients already connected")
            refuse(connection, RPCError(.busy, "too many clients (limit \(configuration.maxClients)); try again later"))
            return nil
        }
        let session = sessions.add { id in Session(id: id, connection: connection, queue: queue, peer: peer, rights: rights) }
        noteBusy()
        logger.debug("client \(session.id) connected: uid \(peer.uid), pid \(peer.pid)")
        connection.start({ [unowned self] event in
            self.assumeIsolated { broker in broker.connectionEvent(event, session: session) }
        }, onClosed: { [unowned self] in
            self.assumeIsolated { broker in broker.sessionEnded(session) }
        })
        return session
    }

    private func refuse(_ connection: ClientConnection, _ error: RPCError) {
        connection.send(RPCMessage.errorResponse(id: nil, error: error).line())
        connection.closeAfterFlush()
    }

    private func connectionEvent(_ event: ClientConnection.Event, session: Session) {
        switch event {
        case .line(let line):
            received(line, from: session)
        case .lineTooLong:
            session.send(.errorResponse(
                id: nil, error: RPCError(.tooLarge, "a line is longer than \(configuration.maxLineBytes) bytes; closing")))
            session.connection.closeAfterFlush()
        case .endOfInput(let hungUp):
            if hungUp || session.inFlight.isEmpty {
                session.connection.closeAfterFlush()
            } else {
                // Half-closed: answer what was asked, then close.
                session.inputEnded = true
            }
        }
    }

    /// The client is gone: everything it started ends, and the keys it was
    /// using are freed.
    private func sessionEnded(_ session: Session) {
        sessions.remove(session)
        for request in session.inFlight.values {
            request.cancel(RPCError(.cancelled, "the client disconnected"))
        }
        requestEnded(count: session.inFlight.count)
        session.inFlight = [:]
        // Prompts it held may be other clients' (it is an agent): theirs end too.
        session.prompts.cancelAll(RPCError(.cancelled, "the client answering the prompt (pid \(session.peer.pid)) disconnected"))
        agentLeft(session)
        wakeSessionEnded(session)
        logger.debug("client \(session.id) disconnected")
        armIdleTimer()
    }

    // MARK: - Messages

    private func received(_ line: UnsafeBufferPointer<UInt8>, from session: Session) {
        let message: RPCMessage
        do {
            message = try RPCMessage.parse(line)
        } catch {
            session.send(.errorResponse(id: error.id, error: error.error))
            return
        }
        switch message {
        case .request(let id, let method, let params):
            handleRequest(id: id, method: method, params: params, session: session)
        case .notification:
            // Nothing a client can notify the daemon of; JSON-RPC forbids replying.
            break
        case .response(let id, let result):
            session.prompts.answer(id, with: .success(result))
        case .errorResponse(let id, let error):
            // Without an id it answers nothing the daemon asked.
            if let id { session.prompts.answer(id, with: .failure(error)) }
        }
    }

    private func handleRequest(id: RPCID, method: String, params: JSONValue?, session: Session) {
        guard session.inFlight[id] == nil else {
            return session.send(.errorResponse(id: id, error: RPCError(.invalidRequest, "request id \(id) is already in use")))
        }
        do throws(RPCError) {
            switch try route(method, id: id, params: params, session: session) {
            case .done(let result):
                session.send(.response(id: id, result: result))
            case .doneSerialized(let result):
                session.send(line: RPCMessage.responseLine(id: id, serializedResult: result))
            case .started:
                break
            }
        } catch {
            session.send(.errorResponse(id: id, error: error))
        }
    }

    enum Handling {
        /// Answered at once.
        case done(JSONValue)
        /// Answered at once with a result serialized beforehand (it holds
        /// no secret: the line is not zeroed).
        case doneSerialized([UInt8])
        /// Answered later, by the request's task.
        case started
    }

    /// Starts a request that waits on keys or on the client: it runs as a
    /// task on the broker, can be cancelled, and is answered when done.
    func start(
        _ method: String, id: RPCID, session: Session, timeout: Duration? = nil,
        _ work: @escaping (InFlightRequest) async throws(RPCError) -> JSONValue
    ) throws(RPCError) -> Handling {
        guard session.inFlight.count < configuration.maxRequestsPerClient else {
            throw RPCError(.busy, "too many requests in flight on this connection (limit \(configuration.maxRequestsPerClient))")
        }
        let request = InFlightRequest(method: method)
        session.inFlight[id] = request
        limitTime(of: request, to: timeout ?? configuration.requestTimeout)
        requestStarted()
        request.task = Task {
            // The nonisolated calls the work awaits stay on the daemon's
            // queue too (see `QueueExecutor`).
            await withTaskExecutorPreference(executor) {
                let outcome: Result<JSONValue, RPCError>
                do throws(RPCError) { outcome = .success(try await work(request)) } catch { outcome = .failure(error) }
                self.finish(id: id, request: request, session: session, outcome: outcome)
            }
        }
        return .started
    }

    private func finish(id: RPCID, request: InFlightRequest, session: Session, outcome: Result<JSONValue, RPCError>) {
        guard session.inFlight[id] === request else { return }
        session.inFlight[id] = nil
        requestEnded()
        tellAgentsFinished(request, outcome)
        if let cancellation = request.cancellation {
            session.send(.errorResponse(id: id, error: cancellation))
        } else {
            switch outcome {
            case .success(let result): session.send(.response(id: id, result: result))
            case .failure(let error): session.send(.errorResponse(id: id, error: error))
            }
        }
        if session.inputEnded && session.inFlight.isEmpty { session.connection.closeAfterFlush() }
    }

    // MARK: - Notifications

    /// Sends one notification to every client that asked to watch; the line
    /// is serialised once, however many are watching.
    func notifyWatchers(_ method: String, _ params: some Encodable) {
        let line = RPCMessage.notification(method: method, params: encode(params)).line()
        for session in sessions.watchers { session.send(line: line) }
    }

    /// Sends `operation.status` for one request.
    func sendStatus(
        _ status: OperationStatus.Status, request id: RPCID, key: RegisteredKey?, holder: Holder? = nil, to session: Session
    ) {
        let params = OperationStatus(request: id.json, status: status, authenticator: key?.id, holder: holder)
        session.send(.notification(method: Method.operationStatus, params: encode(params)))
        if let request = session.inFlight[id] {
            request.lastStatus = params
            request.lastStatusSent = .now()
        }
    }
}

/// Encodes a wire value; the protocol's own types always encode.
func encode(_ value: some Encodable) -> JSONValue {
    do {
        return try JSONValueEncoder().encode(value)
    } catch {
        preconditionFailure("wire types always encode: \(error)")
    }
}

/// Decodes method parameters; absent params are an empty object.
func decode<T: Decodable>(_ type: T.Type, _ params: JSONValue?) throws(RPCError) -> T {
    do {
        return try JSONValueDecoder().decode(type, from: params ?? .object([:]))
    } catch let error as JSONDecodingError {
        throw RPCError(.invalidParams, "invalid params: \(error)")
    } catch {
        throw RPCError(.invalidParams, "invalid params: \(error)")
    }
}
