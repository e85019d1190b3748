import Glibc
import SystemKit

/// What the command line asks `authkeyd` to do.
public enum DaemonCommand: Equatable, Sendable {
    case run(DaemonConfiguration)
    case help
    case version
}

extension DaemonConfiguration {
    public static let version = "0.1.0"

    public static var usage: String {
        """
        Usage: authkeyd [--socket PATH] [--config FILE] [--user] [--virtual-key[=SPEC]]...
                        [--attach unix:PATH]... [--log-level LEVEL] [--SETTING VALUE]...
               authkeyd --version | --help

        The FIDO2 security-key broker: owns the keys on this machine and serves
        them to local programs over a Unix-socket JSON-RPC protocol
        (authkeyd-protocol(7)).

          --config FILE       read settings from FILE (default \(defaultConfigFile);
                              with --user, $XDG_CONFIG_HOME/authkeyd/authkeyd.conf)
          --user              a per-user instance on $XDG_RUNTIME_DIR/authkeyd.sock,
                              serving only the user who runs it
          --virtual-key       a virtual key with default settings
          --version, --help

        Settings (also as 'setting = value' lines in the config file):
        \(settings.map { "  --\($0.name) \($0.value)\n      \($0.meaning)" }.joined(separator: "\n"))

        Signals: SIGTERM stops (clients are told), SIGHUP reloads the config file.
        """
    }

    /// Reads the command line: the config file first, then the flags.
    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> DaemonCommand {
        var configFile: String?
        var userInstance = false
        // A look ahead, taking no values: help and version win wherever
        // they are, and the file is read before the flags that override it.
        var words = CommandLineScanner(arguments)
        while let word = words.next() {
            switch word {
            case .other("-h"), .option("help", value: nil): return .help
            case .other("-V"), .option("version", value: nil): return .version
            case .option("user", value: nil): userInstance = true
            case .option("config", let given):
                guard let file = given ?? words.upcoming else { throw ConfigurationError("--config needs a file") }
                configFile = file
            default: continue
            }
        }
        var configuration = DaemonConfiguration()
        configuration.userInstance = userInstance
        if userInstance {
            configuration.allowUsers = [String(getuid())]
            configuration.allowAdmins = [String(getuid())]
        }
        let explicit = configFile != nil
        let file = configFile ?? defaultConfigPath(userInstance: userInstance, environment: environment)
        configuration.configFile = file
        try configuration.loadConfigFile(required: explicit)
        try configuration.applyFlags(arguments)
        return .run(configuration)
    }

    static func defaultConfigPath(userInstance: Bool, environment: [String: String]) -> String {
        guard userInstance else { return defaultConfigFile }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { return "\(config)/authkeyd/authkeyd.conf" }
        return "\(environment["HOME"] ?? "")/.config/authkeyd/authkeyd.conf"
    }

    /// Loads `configFile`; a missing default file is no error.
    public mutating func loadConfigFile(required: Bool) throws(ConfigurationError) {
        guard let configFile else { return }
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(configFile) } catch { throw ConfigurationError("cannot read \(configFile): \(error)") }
        guard let bytes else {
            if required { throw ConfigurationError("\(configFile) does not exist") }
            return
        }
        try load(configText: String(decoding: bytes, as: UTF8.self), source: configFile)
    }

    /// Applies the flags after the config file: they override it and add to its lists.
    public mutating func applyFlags(_ arguments: [String]) throws(ConfigurationError) {
        var words = CommandLineScanner(arguments)
        while let word = words.next() {
            switch word {
            case .other(let argument): throw ConfigurationError("unexpected argument '\(argument)'")
            // Read before the config file (parse).
            case .option("user", _): continue
            case .option("config", let given): _ = words.value(given)
            // The spec is optional: `--virtual-key` alone is a default key.
            case .option("virtual-key", let given): try apply(setting: "virtual-key", value: words.optionalValue(given) ?? "")
            case .option(let name, let given):
                guard let value = words.value(given) else { throw ConfigurationError("--\(name) needs a value") }
                try apply(setting: name, value: value)
            }
        }
    }
}
