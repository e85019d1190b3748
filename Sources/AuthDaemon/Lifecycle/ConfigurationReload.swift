import SystemKit

/// SIGHUP: reads the config file again (and the command line over it) and
/// applies what can change while running: the log level, the policy,
/// limits and timeouts, the virtual and attached keys. The socket stays.
public struct ConfigurationReload: Sendable {
    /// The configuration at start: what a reload keeps of it (user
    /// instance, config file, a user instance's policy).
    private let initial: DaemonConfiguration
    private let commandLine: [String]
    private let environment: [String: String]
    private let logger: Logger
    private let broker: Broker
    private let keySources: KeySources

    public init(
        configuration: DaemonConfiguration, commandLine: [String], environment: [String: String], logger: Logger,
        broker: Broker, keySources: KeySources
    ) {
        initial = configuration
        self.commandLine = commandLine
        self.environment = environment
        self.logger = logger
        self.broker = broker
        self.keySources = keySources
    }

    public func reload() async {
        Systemd.notify("RELOADING=1", environment: environment, logger: logger)
        // The file is read, and the policy's names resolved (NSS), on a
        // thread of their own: the broker's queue serves clients meanwhile.
        let (initial, commandLine, logger) = (initial, commandLine, logger)
        let loaded = await runOnOwnThread { () -> Result<(DaemonConfiguration, AccessPolicy), ConfigurationError> in
            var fresh = DaemonConfiguration()
            fresh.userInstance = initial.userInstance
            fresh.configFile = initial.configFile
            if fresh.userInstance {
                fresh.allowUsers = initial.allowUsers
                fresh.allowAdmins = initial.allowAdmins
            }
            do throws(ConfigurationError) {
                try fresh.loadConfigFile(required: false)
                try fresh.applyFlags(Array(commandLine.dropFirst()))
            } catch {
                return .failure(error)
            }
            return .success((fresh, Broker.policy(for: fresh, logger: logger)))
        }
        let (fresh, policy): (DaemonConfiguration, AccessPolicy)
        switch loaded {
        case .success(let reloaded): (fresh, policy) = reloaded
        case .failure(let error):
            logger.error("reload failed, keeping the running configuration: \(error)")
            Systemd.notify("READY=1", environment: environment, logger: logger)
            return
        }
        if fresh.resolvedSocketPath(environment: environment) != initial.resolvedSocketPath(environment: environment) {
            logger.warning("the socket path changed; it takes effect at the next start")
        }
        logger.level = fresh.logLevel
        await keySources.reconfigure(fresh)
        logger.notice("configuration reloaded")
        await broker.reconfigure(fresh, policy: policy)
        await broker.reconcileVirtualKeys(with: fresh.virtualKeys)
        Systemd.notify("READY=1", environment: environment, logger: logger)
    }
}
