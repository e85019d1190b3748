// authkeyd: the FIDO2 security-key broker.
import AuthDaemon
import Glibc
import SystemKit

let environment = currentEnvironment()
let configuration: DaemonConfiguration
do {
    switch try DaemonConfiguration.parse(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment) {
    case .help:
        print(DaemonConfiguration.usage)
        exit(0)
    case .version:
        print("authkeyd \(DaemonConfiguration.version)")
        exit(0)
    case .run(let parsed):
        configuration = parsed
    }
} catch {
    writeToStandardError("authkeyd: \(error)\nTry 'authkeyd --help'.\n")
    exit(64)
}

// The services, and what they wait on: the listener accepts once the key
// sources are counted; the group ends them all on SIGTERM or SIGINT.
let logger = Logger(level: configuration.logLevel, environment: environment)
ProcessHardening.apply(logger: logger)
let broker = Broker(configuration: configuration, logger: logger, environment: environment)
let keySources = KeySources(configuration: configuration, broker: broker, logger: logger)
let listener: Listener
do {
    listener = try Listener(
        configuration: configuration, environment: environment, broker: broker, logger: logger,
        startAfter: keySources.ready)
} catch {
    logger.error("\(error)")
    exit(1)
}
// Every async call from here runs on the broker's queue: a nonisolated
// async function called from top-level code would otherwise run on Swift's
// global pool, and libdispatch, once its global pool has been used, wakes
// up every second for good (its workqueue monitor) — an idle daemon that
// polls.
let brokerService = await withTaskExecutorPreference(broker.executor) {
    await BrokerService(broker: broker, configuration: configuration, environment: environment, logger: logger)
}
let reload = ConfigurationReload(
    configuration: configuration, commandLine: CommandLine.arguments, environment: environment, logger: logger,
    broker: broker, keySources: keySources)
// The signals the group follows are ignored for the rest of the process
// first: the sequence puts back the dispositions it found when the group
// stops following them, and a second SIGTERM between then and exit(0)
// (a service manager's, an impatient user's) must not kill the daemon
// with a signal status after a clean shutdown.
let followedSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]
for number in followedSignals { setSignalHandler(number, SIG_IGN) }
// exit-idle needs systemd to keep the socket while the daemon is gone.
var services: [any Service] = [brokerService, keySources, listener]
if let after = configuration.exitIdle {
    if listener.isSocketActivated {
        services.append(IdleExit(broker: broker, after: after))
    } else {
        logger.info("exit-idle \(after) is off: the socket is not systemd's, so nobody would start authkeyd again")
    }
}
let group = ServiceGroup(
    services: services, signals: signalSequence(followedSignals),
    onReload: reload.reload, shutdownDeadline: .milliseconds(4500), executor: broker.executor)
do {
    try await withTaskExecutorPreference(broker.executor) { try await group.run() }
    exit(0)
} catch ServiceGroupError.deadlineExceeded(let deadline, let unfinished) {
    // Asked to stop, and stopping: what did not finish in time is
    // abandoned with the process, as the service manager would do.
    // Exit status 1 is kept for "cannot start" (authkeyd(8)).
    logger.warning("stopped with \(unfinished.joined(separator: ", ")) unfinished after \(deadline)")
    exit(0)
} catch {
    logger.error("\(error)")
    exit(1)
}
