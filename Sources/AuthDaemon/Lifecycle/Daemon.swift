import AuthProtocol
import Dispatch
import Glibc
import SystemKit

/// Starts the broker and everything around it: the listening socket (its
/// own or systemd's), the key sources, signals, and the service manager's
/// notifications.
public final class Daemon: @unchecked Sendable {
    // Mutable state is touched only on the broker's queue after `start`.
    public let broker: Broker
    let logger: Logger
    private var configuration: DaemonConfiguration
    private let commandLine: [String]
    private let environment: [String: String]
    /// The policy as configured at start, for the socket's permissions.
    private let policy: AccessPolicy
    private var listener: Int32 = -1
    /// Watches the listener; nil while accepting is paused (too few
    /// descriptors left) and after shutdown began.
    private var listenerSource: (any DispatchSourceRead)?
    /// Accepting has paused since the backlog was last emptied (the
    /// warning is logged once for each such time).
    private var clientsWaiting = false
    private var shuttingDown = false
    private var descriptors = DescriptorBudget()
    /// Whether we made the socket file (and so remove it on the way out).
    private var ownsSocketFile = false
    private var socketPath = ""
    private var signalSources: [any DispatchSourceSignal] = []
    private var attached: [String: AttachedKeyWatcher] = [:]
    private var usb: USBKeyWatcher?
    /// Key sources still coming up before clients are accepted.
    private var startupSourcesLeft = 0
    private var usbScanPending = false
    private var serving = false
    /// How long accepting clients waits for the USB keys present at start:
    /// a key that does not answer must not keep the others from serving.
    static let usbStartupWait: Duration = .seconds(2)
    /// SIGTERM: everything done by then, or exit regardless.
    static let shutdownDeadline: Duration = .milliseconds(4500)

    public init(configuration: DaemonConfiguration, commandLine: [String], environment: [String: String]) {
        self.configuration = configuration
        self.commandLine = commandLine
        self.environment = environment
        logger = Logger(level: configuration.logLevel, environment: environment)
        policy = AccessPolicy(allowUsers: configuration.allowUsers, allowAdmins: configuration.allowAdmins)
        broker = Broker(configuration: configuration, logger: logger, environment: environment)
    }

    /// Runs until SIGTERM; never returns.
    public func run() -> Never {
        do {
            try start()
        } catch {
            logger.error("\(error)")
            exit(1)
        }
        dispatchMain()
    }

    func start() throws(ConfigurationError) {
        // Nobody may read PINs and tokens out of this process: no core
        // dumps, no ptrace by the same uid.
        setProcessDumpable(false)
        signal(SIGPIPE, SIG_IGN)
        for name in policy.unresolved {
            logger.warning("allow-users/allow-admins: no user or group \"\(name)\"; ignored")
        }
        raiseDescriptorLimit()
        try openListener()
        let store = openStore()
        broker.queue.async { [self] in
            broker.assumeIsolated { $0.store = store }
            installSignalHandlers()
            startKeySources()
        }
    }

    /// Clients are accepted, and READY=1 sent, once the keys present at
    /// start are in service. The first client is often the one whose
    /// connection made systemd start the daemon, and it must find them:
    /// accepting from the start, it was seen to get an empty list under
    /// load. Meanwhile its connection waits in the listen backlog.
    private func keySourceUp() {
        startupSourcesLeft -= 1
        guard startupSourcesLeft == 0, !serving, !shuttingDown else { return }
        serving = true
        startListening()
        Systemd.notify("READY=1\nSTATUS=Serving \(socketPath)\nMAINPID=\(getpid())", environment: environment)
        logger.notice("authkeyd \(DaemonConfiguration.version) serving \(socketPath)")
    }

    private func usbScanFinished() {
        guard usbScanPending else { return }
        usbScanPending = false
        keySourceUp()
    }

    /// The registration store under the state directory; nil (and an
    /// error in the log) when that directory cannot be made.
    private func openStore() -> RegistrationStore? {
        let directory = configuration.resolvedStateDirectory(environment: environment) + "/registrations"
        let store = RegistrationStore(directory: directory, logger: logger, queue: broker.queue)
        do {
            try store.prepare()
            return store
        } catch {
            logger.error("registrations will not be kept: \(error) (set state-dir in authkeyd.conf)")
            return nil
        }
    }

    // MARK: - The socket

    private func openListener() throws(ConfigurationError) {
        socketPath = configuration.resolvedSocketPath(environment: environment)
        if let inherited = Systemd.inheritedListener(environment: environment) {
            listener = inherited
            logger.info("using the socket systemd passed (socket activation)")
        } else {
            listener = try bindSocket(at: socketPath)
            ownsSocketFile = true
        }
        do { try setNonBlocking(listener) } catch { throw ConfigurationError("\(error)") }
    }

    /// Binds the socket: refuses when another daemon serves it, replaces a
    /// stale file, and sets the permissions the policy calls for.
    private func bindSocket(at path: String) throws(ConfigurationError) -> Int32 {
        if UnixSocket.isListening(path: path, kind: .stream) {
            throw ConfigurationError("another authkeyd is already serving \(path)")
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if !directory.isEmpty && access(directory, F_OK) != 0 { mkdir(directory, 0o755) }
        unlink(path)
        let permissions = policy.socketPermissions()
        let mode = configuration.socketMode ?? permissions.mode
        // Created with no access for anyone, opened up once its owner is right.
        let previous = umask(0o777)
        defer { umask(previous) }
        let fd: Int32
        do { fd = try UnixSocket.listen(path: path, kind: .stream, backlog: 1024) } catch {
            throw ConfigurationError("cannot serve \(path): \(error)")
        }
        if let group = permissions.group, chown(path, geteuid(), group) != 0 {
            logger.warning("cannot give \(path) to group \(group): \(SystemError("chown"))")
        }
        chmod(path, mode)
        return fd
    }

    private func startListening() {
        let source = DispatchSource.makeReadSource(fileDescriptor: listener, queue: broker.queue)
        source.setEventHandler { [self] in acceptClients() }
        listenerSource = source
        source.resume()
    }

    private func acceptClients() {
        guard let source = listenerSource else { return }
        do {
            while let fd = try UnixSocket.accept(listener, nonBlocking: true) {
                broker.assumeIsolated { $0.accept(fd) }
                // Stop before the clients take what the daemon needs itself.
                if descriptors.isSpent(byClient: fd) {
                    pauseAccepting(source, because: "\(fd + 1) descriptors are open, the limit is \(descriptors.limit)")
                    return
                }
            }
            clientsWaiting = false
        } catch {
            // Out of descriptors all the same (or memory): the client stays
            // in the backlog and the listener stays readable.
            pauseAccepting(source, because: "\(error)")
        }
    }

    /// Stops accepting for a moment; the clients that come meanwhile wait
    /// in the listen backlog. Waiting beats spinning on a listener that
    /// stays readable.
    private func pauseAccepting(_ source: any DispatchSourceRead, because reason: String) {
        if !clientsWaiting {
            logger.warning("cannot accept more clients: \(reason); they wait until others leave")
            clientsWaiting = true
        }
        // Cancelled, and a new source made later: simpler than suspending
        // a source from its own handler and keeping it alive until resumed.
        source.cancel()
        listenerSource = nil
        resumeAcceptingLater()
    }

    private func resumeAcceptingLater() {
        broker.queue.asyncAfter(deadline: .now() + .milliseconds(Self.acceptRetryDelay.wholeMilliseconds)) { [self] in
            guard !shuttingDown else { return }
            if descriptors.hasRoomForClient(probingWith: listener) { startListening() } else { resumeAcceptingLater() }
        }
    }

    static let acceptRetryDelay: Duration = .milliseconds(100)

    /// Raises the descriptor limit, and warns when it is too low for max-clients.
    private func raiseDescriptorLimit() {
        descriptors.raiseLimit()
        let needed = DescriptorBudget.needed(for: configuration.maxClients)
        if descriptors.limit < needed {
            logger.warning("max-clients \(configuration.maxClients) needs about \(needed) descriptors, but the limit is \(descriptors.limit) (LimitNOFILE=): clients beyond it wait until others leave")
        }
    }

    // MARK: - Keys

    /// Brings up the configured keys; `virtualKeysUp` runs once the
    /// in-process virtual keys are in service.
    /// Brings up the configured virtual keys, the attached keys and the
    /// USB keys; `keySourceUp` counts the first and the last.
    private func startKeySources() {
        let broker = broker
        let specs = configuration.virtualKeys
        startupSourcesLeft = configuration.usb ? 2 : 1
        // One after another, so that ids follow the order of the flags.
        broker.startTask { [self, broker] in
            for spec in specs { await broker.bringUpVirtualKey(spec: spec) }
            broker.queue.async { [self] in keySourceUp() }
        }
        reconcileAttachedKeys()
        if configuration.usb {
            usbScanPending = true
            let watcher = USBKeyWatcher(broker: broker, logger: logger)
            watcher.start { [self] in broker.queue.async { [self] in usbScanFinished() } }
            usb = watcher
            broker.queue.asyncAfter(deadline: .now() + .milliseconds(Self.usbStartupWait.wholeMilliseconds)) { [self] in
                if usbScanPending { logger.warning("USB keys still coming up after \(Self.usbStartupWait); serving meanwhile") }
                usbScanFinished()
            }
        }
    }

    private func reconcileAttachedKeys() {
        for (path, watcher) in attached where !configuration.attachPaths.contains(path) {
            watcher.stop()
            attached[path] = nil
            let broker = broker
            broker.startTask { [broker] in if let key = await broker.key(atPath: "unix:\(path)") { await broker.takeDown(key) } }
        }
        for path in configuration.attachPaths where attached[path] == nil {
            do {
                let watcher = try AttachedKeyWatcher(path: path, broker: broker)
                watcher.start()
                attached[path] = watcher
            } catch {
                logger.error("cannot attach unix:\(path): \(error)")
            }
        }
    }

    // MARK: - Signals

    private func installSignalHandlers() {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: broker.queue)
            source.setEventHandler { [self] in
                if number == SIGHUP { reload() } else { shutDown() }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// SIGHUP: reads the config file again (and the command line over it)
    /// and applies what can change while running.
    private func reload() {
        Systemd.notify("RELOADING=1", environment: environment)
        var fresh = DaemonConfiguration()
        fresh.userInstance = configuration.userInstance
        fresh.configFile = configuration.configFile
        if fresh.userInstance {
            fresh.allowUsers = configuration.allowUsers
            fresh.allowAdmins = configuration.allowAdmins
        }
        do {
            try fresh.loadConfigFile(required: false)
            try fresh.applyFlags(Array(commandLine.dropFirst()))
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
            Systemd.notify("READY=1", environment: environment)
            return
        }
        if fresh.resolvedSocketPath(environment: environment) != socketPath {
            logger.warning("the socket path changed; it takes effect at the next start")
        }
        configuration = fresh
        logger.level = fresh.logLevel
        reconcileAttachedKeys()
        let broker = broker
        broker.startTask { [fresh, environment] in
            await broker.reconfigure(fresh)
            await broker.reconcileVirtualKeys(with: fresh.virtualKeys)
            Systemd.notify("READY=1", environment: environment)
        }
        logger.notice("configuration reloaded")
    }

    /// SIGTERM: stop taking clients, cancel every operation, tell every
    /// client, and exit within the deadline whatever happens.
    private func shutDown() {
        guard !shuttingDown else { return }
        shuttingDown = true
        Systemd.notify("STOPPING=1", environment: environment)
        logger.notice("shutting down")
        listenerSource?.cancel()
        listenerSource = nil
        if ownsSocketFile { unlink(socketPath) }
        attached.values.forEach { $0.stop() }
        usb?.stop()
        let broker = broker
        broker.queue.asyncAfter(deadline: .now() + .milliseconds(Self.shutdownDeadline.wholeMilliseconds)) {
            exit(0)
        }
        broker.startTask {
            await broker.shutDown()
            exit(0)
        }
    }
}
