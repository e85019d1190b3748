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

let logger = Logger(level: configuration.logLevel, environment: environment)
ProcessHardening.apply(logger: logger)
let daemon: Daemon
do {
    daemon = try Daemon(
        configuration: configuration, environment: environment, commandLine: CommandLine.arguments, logger: logger)
} catch {
    logger.error("\(error)")
    exit(1)
}
// The signals the group follows are ignored for the rest of the process
// first: the sequence puts back the dispositions it found when the group
// stops following them, and a second SIGTERM between then and exit(0)
// (a service manager's, an impatient user's) must not kill the daemon
// with a signal status after a clean shutdown.
let followedSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]
for number in followedSignals { setSignalHandler(number, SIG_IGN) }
let group = daemon.group(signals: signalSequence(followedSignals))
// Every async call from here runs on the broker's queue: a nonisolated
// async function called from top-level code would otherwise run on Swift's
// global pool, and libdispatch, once its global pool has been used, wakes
// up every second for good (its workqueue monitor) — an idle daemon that
// polls.
do {
    try await withTaskExecutorPreference(daemon.broker.executor) { try await group.run() }
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
