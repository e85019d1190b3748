import Dispatch
import SystemKit

/// Where keys come from: the in-process virtual keys, the attached socket
/// keys (`--attach`), and USB keys (the manifest at start, hotplug after).
/// `ready` opens once the keys present at start are counted: the virtual
/// ones in service, and the USB scan done or given up on.
///
/// An actor on the broker's executor: the watchers' callbacks run on the
/// broker's queue and enter it synchronously.
public actor KeySources: Service {
    private nonisolated let broker: Broker
    public nonisolated var unownedExecutor: UnownedSerialExecutor { broker.unownedExecutor }
    private let logger: Logger
    private let virtualKeys: [String]
    private let attachPaths: [String]
    private let usbEnabled: Bool
    private var attached: [String: AttachedKeyWatcher] = [:]
    private var usb: USBKeyWatcher?
    /// Sources still being counted before `ready` opens.
    private var sourcesLeft = 0
    private var usbScanPending = false
    /// Set once the sources stop following keys: a reload still under way
    /// then starts no new watcher.
    private var stopped = false
    /// Opens when the keys present at start are in service.
    public nonisolated let ready = Latch()

    /// How long readiness waits for the USB keys present at start: a key
    /// that does not answer must not keep the others from serving.
    static let usbStartupWait: Duration = .seconds(2)

    public init(configuration: DaemonConfiguration, broker: Broker, logger: Logger) {
        self.broker = broker
        self.logger = logger
        virtualKeys = configuration.virtualKeys
        attachPaths = configuration.attachPaths
        usbEnabled = configuration.usb
    }

    /// Brings up the configured keys and follows them until the graceful
    /// shutdown; then stops following (the broker closes the keys).
    public func run() async {
        sourcesLeft = usbEnabled ? 2 : 1
        reconcileAttachedKeys(with: attachPaths)
        if usbEnabled { startUSB() }
        // One after another, so that ids follow the order of the flags.
        for spec in virtualKeys where !GracefulShutdown.isRequested {
            await broker.bringUpVirtualKey(spec: spec)
        }
        sourceCounted()
        await GracefulShutdown.wait()
        stopped = true
        attached.values.forEach { $0.stop() }
        usb?.stop()
    }

    /// After a reload: the attached keys follow the new configuration
    /// (the virtual ones are the broker's, `reconcileVirtualKeys`).
    func reconfigure(_ fresh: DaemonConfiguration) {
        guard !stopped else { return }
        reconcileAttachedKeys(with: fresh.attachPaths)
    }

    private func sourceCounted() {
        sourcesLeft -= 1
        if sourcesLeft == 0 { ready.open() }
    }

    private func startUSB() {
        usbScanPending = true
        let watcher = USBKeyWatcher(broker: broker, logger: logger)
        watcher.start { [self] in broker.queue.async { [self] in assumeIsolated { $0.usbScanFinished() } } }
        usb = watcher
        broker.queue.asyncAfter(deadline: .now() + .milliseconds(Self.usbStartupWait.wholeMilliseconds)) { [self] in
            assumeIsolated { sources in
                if sources.usbScanPending {
                    sources.logger.warning("USB keys still coming up after \(Self.usbStartupWait); serving meanwhile")
                }
                sources.usbScanFinished()
            }
        }
    }

    private func usbScanFinished() {
        guard usbScanPending else { return }
        usbScanPending = false
        sourceCounted()
    }

    private func reconcileAttachedKeys(with paths: [String]) {
        for (path, watcher) in attached where !paths.contains(path) {
            watcher.stop()
            attached[path] = nil
            let broker = broker
            broker.startTask { [broker] in if let key = await broker.key(atPath: "unix:\(path)") { await broker.takeDown(key) } }
        }
        for path in paths where attached[path] == nil {
            do {
                let watcher = try AttachedKeyWatcher(path: path, broker: broker)
                watcher.start()
                attached[path] = watcher
            } catch {
                logger.error("cannot attach unix:\(path): \(error)")
            }
        }
    }
}
