// authkeyd: the FIDO2 security-key broker.
import AuthDaemon
import Glibc
import SystemKit

let environment = currentEnvironment()
do {
    switch try DaemonConfiguration.parse(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment) {
    case .help:
        print(DaemonConfiguration.usage)
    case .version:
        print("authkeyd \(DaemonConfiguration.version)")
    case .run(let configuration):
        Daemon(configuration: configuration, commandLine: CommandLine.arguments, environment: environment).run()
    }
} catch {
    writeToStandardError("authkeyd: \(error)\nTry 'authkeyd --help'.\n")
    exit(64)
}
