import Dispatch
import Glibc
import SystemKit

/// The listening socket: made at start-up (its own, with the permissions
/// the policy calls for, or the one systemd passed), accepting clients
/// within the descriptor budget once the key sources are counted, and
/// closed on shutdown. It tells the service manager when it serves
/// (READY=1) and when it stops (STOPPING=1).
///
/// An actor on the broker's executor: the listener's Dispatch source runs
/// on the broker's queue and hands each client to the broker synchronously.
public actor Listener: Service {
    private nonisolated let broker: Broker
    public nonisolated var unownedExecutor: UnownedSerialExecutor { broker.unownedExecutor }
    private let logger: Logger
    private let environment: [String: String]
    private let fd: Int32
    private let socketPath: String
    /// Whether we made the socket file (and so remove it on the way out).
    private let ownsSocketFile: Bool
    /// Whether systemd passed the socket: it then keeps it while the
    /// daemon is not running, and starts the daemon again on the next
    /// connection (what `exit-idle` relies on).
    public nonisolated let isSocketActivated: Bool
    /// Opens when the keys present at start are in service.
    private let startAfter: Latch
    private var descriptors: DescriptorBudget
    /// Watches the listener; nil while accepting is paused (too few
    /// descriptors left) and once shutdown began.
    private var source: (any DispatchSourceRead)?
    /// Accepting has paused since the backlog was last emptied (the
    /// warning is logged once for each such time).
    private var clientsWaiting = false
    private var stopped = false

    /// Between tries to accept again once the clients' descriptors ran out.
    static let acceptRetryDelay: Duration = .milliseconds(100)

    /// Makes the socket (or takes systemd's); a failure is the daemon's
    /// start-up error. Clients are accepted once `startAfter` opens.
    public init(
        configuration: DaemonConfiguration, environment: [String: String], broker: Broker, logger: Logger,
        startAfter: Latch
    ) throws(ConfigurationError) {
        self.broker = broker
        self.logger = logger
        self.environment = environment
        self.startAfter = startAfter
        var budget = DescriptorBudget()
        budget.raiseLimit()
        let needed = DescriptorBudget.needed(for: configuration.maxClients)
        if budget.limit < needed {
            logger.warning("max-clients \(configuration.maxClients) needs about \(needed) descriptors, but the limit is \(budget.limit) (LimitNOFILE=): clients beyond it wait until others leave")
        }
        descriptors = budget
        socketPath = configuration.resolvedSocketPath(environment: environment)
        let inherited: Int32?
        do { inherited = try Systemd.inheritedListener(environment: environment) } catch {
            throw ConfigurationError("the socket systemd passed: \(error)")
        }
        isSocketActivated = inherited != nil
        if let inherited {
            fd = inherited
            ownsSocketFile = false
            logger.info("using the socket systemd passed (socket activation)")
        } else {
            let permissions = AccessPolicy(allowUsers: configuration.allowUsers, allowAdmins: configuration.allowAdmins)
                .socketPermissions()
            fd = try SocketFile.bind(
                at: socketPath, mode: configuration.socketMode ?? permissions.mode, group: permissions.group, logger: logger)
            ownsSocketFile = true
        }
        do { try setNonBlocking(fd) } catch { throw ConfigurationError("\(error)") }
    }

    /// Accepts clients from when the key sources are counted until the
    /// graceful shutdown; then stops, and removes the socket file it made.
    public func run() async {
        // Clients are accepted, and READY=1 sent, once the keys present at
        // start are in service. The first client is often the one whose
        // connection made systemd start the daemon, and it must find them:
        // accepting from the start, it was seen to get an empty list under
        // load. Meanwhile its connection waits in the listen backlog.
        let serveOrStop = Latch()
        startAfter.onOpen { serveOrStop.open() }
        GracefulShutdown.onRequest { serveOrStop.open() }
        await serveOrStop.wait()
        if !GracefulShutdown.isRequested {
            startAccepting()
            Systemd.notify("READY=1\nSTATUS=Serving \(socketPath)\nMAINPID=\(getpid())", environment: environment, logger: logger)
            logger.notice("authkeyd \(DaemonConfiguration.version) serving \(socketPath)")
            await GracefulShutdown.wait()
        }
        stop()
    }

    /// Stops taking clients and closes the listening socket, so that a
    /// client that connects from now on is refused at once rather than
    /// left waiting in the backlog. (Under socket activation systemd keeps
    /// its own copy, and the next connection starts the daemon again.)
    private func stop() {
        Systemd.notify("STOPPING=1", environment: environment, logger: logger)
        logger.notice("shutting down")
        stopped = true
        let listening = fd
        if let source {
            // Dispatch may still be watching the descriptor until its
            // cancel handler runs: only then may it close.
            source.setCancelHandler { FileDescriptor.close(listening) }
            source.cancel()
        } else {
            FileDescriptor.close(listening)
        }
        source = nil
        if ownsSocketFile {
            do { try FileSystem.removeFile(socketPath) } catch { logger.warning("cannot remove the socket: \(error)") }
        }
    }

    private func startAccepting() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: broker.queue)
        source.setEventHandler { [self] in assumeIsolated { $0.acceptClients() } }
        self.source = source
        source.resume()
    }

    private func acceptClients() {
        guard source != nil else { return }
        do {
            while let client = try UnixSocket.accept(fd, nonBlocking: true) {
                _ = broker.assumeIsolated { $0.accept(client) }
                // Stop before the clients take what the daemon needs itself.
                if descriptors.isSpent(byClient: client) {
                    pauseAccepting(because: "\(client + 1) descriptors are open, the limit is \(descriptors.limit)")
                    return
                }
            }
            clientsWaiting = false
        } catch {
            // Out of descriptors all the same (or memory): the client stays
            // in the backlog and the listener stays readable.
            pauseAccepting(because: "\(error)")
        }
    }

    /// Stops accepting for a moment; the clients that come meanwhile wait
    /// in the listen backlog. Waiting beats spinning on a listener that
    /// stays readable.
    private func pauseAccepting(because reason: String) {
        if !clientsWaiting {
            logger.warning("cannot accept more clients: \(reason); they wait until others leave")
            clientsWaiting = true
        }
        // Cancelled, and a new source made later: simpler than suspending
        // a source from its own handler and keeping it alive until resumed.
        source?.cancel()
        source = nil
        resumeAcceptingLater()
    }

    private func resumeAcceptingLater() {
        broker.queue.asyncAfter(deadline: .now() + .milliseconds(Self.acceptRetryDelay.wholeMilliseconds)) { [self] in
            assumeIsolated { listener in
                guard !listener.stopped else { return }
                if listener.descriptors.hasRoomForClient(probingWith: listener.fd) {
                    listener.startAccepting()
                } else {
                    listener.resumeAcceptingLater()
                }
            }
        }
    }
}
