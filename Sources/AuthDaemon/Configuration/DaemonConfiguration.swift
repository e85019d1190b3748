import Glibc
import VirtualKey

/// Everything `authkeyd` can be told, from `authkeyd.conf` and then the
/// command line (which adds to lists and overrides the rest).
public struct DaemonConfiguration: Sendable, Equatable {
    /// nil: the instance's default path.
    public var socketPath: String?
    /// A per-user instance: `$XDG_RUNTIME_DIR/authkeyd.sock`, its own uid only.
    public var userInstance = false
    public var configFile: String?
    /// In-process virtual keys, each as its spec.
    public var virtualKeys: [String] = []
    /// Sockets of attached keys (`unix:PATH`).
    public var attachPaths: [String] = []
    /// Whether to look for USB keys (libfido2's manifest and udev).
    public var usb = true
    public var logLevel: LogLevel = .info
    /// Who may use keys, and who may manage them: user names, uids,
    /// `@group`, or `*` for everyone.
    public var allowUsers: [String] = ["root", "@authkeyd"]
    public var allowAdmins: [String] = ["root"]
    /// The socket file's mode; nil derives it from `allowUsers`.
    public var socketMode: mode_t?
    public var maxClients = 512
    public var maxLineBytes = 1 << 20
    public var maxRequestsPerClient = 16
    /// How long a request may take, prompts and touches included.
    public var requestTimeout: Duration = .seconds(60)
    /// `exit-idle`: exit after this long with nothing to do, when socket
    /// activated; nil (`off`): never.
    public var exitIdle: Duration?
    /// `key-linger`: how long a key stays open after its last call, so that
    /// a burst of calls opens it once; then it is closed, and other
    /// programs can open it.
    public var keyLinger: Duration = .milliseconds(500)
    /// How long the daemon waits for a client to answer a prompt.
    public var promptTimeout: Duration = .seconds(60)
    /// Where the registration store lives; nil: `$STATE_DIRECTORY`, or the
    /// instance's default.
    public var stateDirectory: String?

    public init() {}

    public static let defaultSystemSocket = "/run/authkeyd/authkeyd.sock"
    public static let defaultConfigFile = "/etc/authkeyd/authkeyd.conf"

    /// The socket path this configuration means, defaults applied.
    public func resolvedSocketPath(environment: [String: String]) -> String {
        if let socketPath { return socketPath }
        if userInstance, let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return "\(runtime)/authkeyd.sock" }
        return Self.defaultSystemSocket
    }

    /// The registration store's directory, defaults applied.
    public func resolvedStateDirectory(environment: [String: String]) -> String {
        if let stateDirectory { return stateDirectory }
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first { return String(fromSystemd) }
        if userInstance {
            if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return "\(state)/authkeyd" }
            if let home = environment["HOME"], !home.isEmpty { return "\(home)/.local/state/authkeyd" }
        }
        return "/var/lib/authkeyd"
    }
}

/// A configuration mistake, said so that the user can fix it.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension DaemonConfiguration {
    /// The settings, as both `authkeyd.conf` keys and `--long-flags`.
    public static let settings: [(name: String, value: String, meaning: String)] = [
        ("socket", "PATH", "the Unix socket to serve (default \(defaultSystemSocket); --user: $XDG_RUNTIME_DIR/authkeyd.sock)"),
        ("virtual-key", "SPEC", "add an in-process virtual key (repeatable; see authkeyd-virtkey --help for SPEC)"),
        ("attach", "unix:PATH", "attach the key served on a SOCK_SEQPACKET socket (repeatable)"),
        ("usb", "yes|no", "use USB keys through libfido2 and udev (default yes)"),
        ("log-level", "error|warning|notice|info|debug", "how much to log (default info)"),
        ("allow-users", "LIST", "who may use keys: names, uids, @group, * (default root, @authkeyd)"),
        ("allow-admins", "LIST", "who may manage keys: PIN, reset, deleting credentials (default root)"),
        ("socket-mode", "OCTAL", "the socket file's mode (default: from allow-users)"),
        ("max-clients", "N", "connections served at once (default 512)"),
        ("max-line-bytes", "N", "longest request line (default 1048576)"),
        ("max-requests-per-client", "N", "requests one client may have in flight (default 16)"),
        ("request-timeout", "DURATION", "how long one request may take (default 60s)"),
        ("exit-idle", "DURATION|off", "when socket-activated, exit after this long with no client (default off; the units set 60s)"),
        ("key-linger", "DURATION", "how long a key stays open after its last use, 0 to 60s (default 500ms)"),
        ("prompt-timeout", "DURATION", "how long to wait for a client to answer a prompt (default 60s)"),
        ("state-dir", "DIR", "where registrations are kept (default $STATE_DIRECTORY or /var/lib/authkeyd)"),
    ]

    /// Applies one setting; `name` without dashes.
    public mutating func apply(setting name: String, value: String) throws(ConfigurationError) {
        func invalid(_ expected: String) -> ConfigurationError {
            ConfigurationError("\(name) = \(value): expected \(expected)")
        }
        func count(_ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            guard let n = Int(value), range.contains(n) else { throw invalid("a number from \(range.lowerBound) to \(range.upperBound)") }
            return n
        }
        switch name {
        case "socket": socketPath = value
        case "virtual-key":
            do { _ = try VirtualKeyConfiguration(spec: value) } catch { throw ConfigurationError("virtual-key = \(Self.redacted(value)): \(error)") }
            virtualKeys.append(value)
        case "attach":
            guard value.hasPrefix("unix:"), value.count > 5 else { throw invalid("unix:PATH") }
            attachPaths.append(String(value.dropFirst(5)))
        case "usb":
            guard let flag = Self.flag(value) else { throw invalid("yes or no") }
            usb = flag
        case "log-level":
            guard let level = LogLevel(name: value) else { throw invalid("error, warning, notice, info or debug") }
            logLevel = level
        case "allow-users": allowUsers = Self.list(value)
        case "allow-admins": allowAdmins = Self.list(value)
        case "socket-mode":
            guard let mode = mode_t(value, radix: 8), mode <= 0o777 else { throw invalid("an octal mode such as 0660") }
            socketMode = mode
        case "max-clients": maxClients = try count(1...100_000)
        case "max-line-bytes": maxLineBytes = try count(1024...(64 << 20))
        case "max-requests-per-client": maxRequestsPerClient = try count(1...1024)
        case "request-timeout":
            guard let duration = Self.duration(value) else { throw invalid("a duration such as 60s") }
            requestTimeout = duration
        case "exit-idle":
            if value == "off" {
                exitIdle = nil
            } else {
                guard let duration = Self.duration(value), duration > .zero else { throw invalid("a duration such as 60s, or off") }
                exitIdle = duration
            }
        case "key-linger":
            // 0: closed as soon as its queue is empty.
            let duration = ["0", "0s", "0ms"].contains(value) ? .zero : Self.duration(value)
            guard let duration, duration <= .seconds(60) else { throw invalid("a duration from 0 to 60s, such as 500ms") }
            keyLinger = duration
        case "prompt-timeout":
            guard let duration = Self.duration(value) else { throw invalid("a duration such as 60s") }
            promptTimeout = duration
        case "state-dir": stateDirectory = value
        default:
            throw ConfigurationError("unknown setting '\(name)' (known: \(Self.settings.map(\.name).joined(separator: ", ")))")
        }
    }

    /// Reads `authkeyd.conf`: `setting = value` lines, `#` comments.
    public mutating func load(configText text: String, source: String) throws(ConfigurationError) {
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(source):\(number + 1): expected 'setting = value'")
            }
            let name = line[..<equals].trimmingCharacters()
            let value = line[line.index(after: equals)...].trimmingCharacters()
            do { try apply(setting: name, value: value) } catch {
                throw ConfigurationError("\(source):\(number + 1): \(error.message)")
            }
        }
    }

    static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters() }.filter { !$0.isEmpty }
    }

    static func flag(_ value: String) -> Bool? {
        switch value {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: return nil
        }
    }

    /// `60s`, `500ms`, `2m`, or a bare number of seconds.
    static func duration(_ value: String) -> Duration? {
        if value.hasSuffix("ms"), let ms = Int(value.dropLast(2)), ms > 0 { return .milliseconds(ms) }
        if value.hasSuffix("m"), let minutes = Int(value.dropLast()), minutes > 0 { return .seconds(minutes * 60) }
        if value.hasSuffix("s"), let seconds = Double(value.dropLast()), seconds > 0 { return .milliseconds(Int(seconds * 1000)) }
        if let seconds = Double(value), seconds > 0 { return .milliseconds(Int(seconds * 1000)) }
        return nil
    }

    /// A virtual-key spec with any PIN in it blanked, for messages and logs.
    static func redacted(_ spec: String) -> String {
        spec.split(separator: ",", omittingEmptySubsequences: false).map { entry in
            entry.trimmingCharacters().hasPrefix("pin=") ? "pin=<redacted>" : String(entry)
        }.joined(separator: ",")
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
    }
}
