import Dispatch
import Glibc
import SystemKit

/// The daemon, wired: its services in the order they start (the broker,
/// the key sources, the listener, and `exit-idle` where it applies), the
/// reload that SIGHUP runs, and the group that runs them and stops them in
/// reverse. The one place the parts are put together: authkeyd's main, the
/// lifecycle tests and the in-process broker of the tests all come here.
public struct Daemon: Sendable {
    public let broker: Broker
    public let keySources: KeySources
    public let listener: Listener
    public let services: [any Service]
    public let reload: ConfigurationReload

    /// Every part; throws the start-up error (the socket cannot be made).
    /// `commandLine` is what a reload parses again over the config file.
    public init(
        configuration: DaemonConfiguration, environment: [String: String], commandLine: [String], logger: Logger
    ) throws(ConfigurationError) {
        let broker = Broker(configuration: configuration, logger: logger, environment: environment)
        let keySources = KeySources(configuration: configuration, broker: broker, logger: logger)
        // The listener accepts once the key sources are counted.
        let listener = try Listener(
            configuration: configuration, environment: environment, broker: broker, logger: logger,
            startAfter: keySources.ready)
        var services: [any Service] = [BrokerService(broker: broker), keySources, listener]
        // exit-idle needs systemd to keep the socket while the daemon is gone.
        if let after = configuration.exitIdle {
            if listener.isSocketActivated {
                services.append(IdleExit(broker: broker, after: after))
            } else {
                logger.info("exit-idle \(after) is off: the socket is not systemd's, so nobody would start authkeyd again")
            }
        }
        self.broker = broker
        self.keySources = keySources
        self.listener = listener
        self.services = services
        reload = ConfigurationReload(
            configuration: configuration, commandLine: commandLine, environment: environment, logger: logger,
            broker: broker, keySources: keySources)
    }

    /// The group that runs the services on the broker's queue until a
    /// shutdown (`signals`, or `triggerGracefulShutdown()`), within
    /// `ShutdownDeadline.total`.
    public func group(signals: AsyncStream<Int32>? = nil) -> ServiceGroup {
        ServiceGroup(
            services: services, signals: signals, onReload: reload.reload, shutdownDeadline: ShutdownDeadline.total,
            executor: broker.executor)
    }
}
