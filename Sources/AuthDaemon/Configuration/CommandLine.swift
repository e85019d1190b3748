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
        for (index, argument) in arguments.enumerated() {
            switch argument {
            case "-h", "--help": return .help
            case "-V", "--version": return .version
            case "--user": userInstance = true
            case "--config":
                guard index + 1 < arguments.count else { throw ConfigurationError("--config needs a file") }
                configFile = arguments[index + 1]
            default:
                if argument.hasPrefix("--config=") { configFile = String(argument.dropFirst(9)) }
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
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--") else { throw ConfigurationError("unexpected argument '\(argument)'") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            switch name {
            case "user": continue
            case "config":
                if value == nil { _ = remaining.popFirst() }
                continue
            case "virtual-key":
                // The spec is optional: `--virtual-key` alone is a default key.
                if value == nil, let next = remaining.first, !next.hasPrefix("--") {
                    value = remaining.popFirst()
                }
                try apply(setting: name, value: value ?? "")
            default:
                if value == nil {
                    guard let next = remaining.popFirst() else { throw ConfigurationError("--\(name) needs a value") }
                    value = next
                }
                try apply(setting: name, value: value!)
            }
        }
    }
}
