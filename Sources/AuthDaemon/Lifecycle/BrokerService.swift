/// The broker as a service: it serves what the listener hands it until the
/// graceful shutdown, then finishes the operations in flight (answered
/// `shuttingDown`), tells every client, and closes the keys.
public struct BrokerService: Service {
    public let broker: Broker

    /// Gives the broker its registration store under the state directory
    /// (none, and an error in the log, when that directory cannot be made).
    public init(broker: Broker, configuration: DaemonConfiguration, environment: [String: String], logger: Logger) async {
        self.broker = broker
        let directory = configuration.resolvedStateDirectory(environment: environment) + "/registrations"
        let store = RegistrationStore(directory: directory, logger: logger, queue: broker.queue)
        do {
            try store.prepare()
            await broker.adoptStore(store)
        } catch {
            logger.error("registrations will not be kept: \(error) (set state-dir in authkeyd.conf)")
        }
    }

    public func run() async {
        await GracefulShutdown.wait()
        await broker.shutDown()
    }
}
