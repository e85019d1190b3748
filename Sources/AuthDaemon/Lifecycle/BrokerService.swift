/// The broker as a service: it serves what the listener hands it until the
/// graceful shutdown, then finishes the operations in flight (answered
/// `shuttingDown`), tells every client, and closes the keys.
public struct BrokerService: Service {
    public let broker: Broker

    public init(broker: Broker) {
        self.broker = broker
    }

    public func run() async {
        await GracefulShutdown.wait()
        await broker.shutDown()
    }
}
