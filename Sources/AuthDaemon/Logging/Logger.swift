import Glibc
import Synchronization
import SystemKit

/// Log levels, numbered as syslog priorities so that the journal's `<N>`
/// prefix is the level itself.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { "\($0)" == name }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The daemon's log, on standard error.
///
/// When systemd connected standard error to the journal (`JOURNAL_STREAM`
/// names stderr's device and inode), each line starts with `<N>` so the
/// journal files it under the right priority; otherwise lines carry a time
/// and the level's name. Callers pass only what may be shown: PINs, tokens
/// and request bodies are never logged.
public final class Logger: Sendable {
    private let threshold: Atomic<Int>
    private let journal: Bool
    /// Where lines go instead of standard error, if set (a test's record).
    private let sink: (@Sendable (LogLevel, String) -> Void)?

    public init(
        level: LogLevel = .info, environment: [String: String] = currentEnvironment(),
        sink: (@Sendable (LogLevel, String) -> Void)? = nil
    ) {
        threshold = Atomic(level.rawValue)
        journal = Self.standardErrorIsJournal(environment["JOURNAL_STREAM"])
        self.sink = sink
    }

    public var level: LogLevel {
        get { LogLevel(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level.rawValue <= threshold.load(ordering: .relaxed) }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        // One write per line, so concurrent lines never interleave.
        let text = message().replacingNewlines()
        if let sink {
            sink(level, text)
        } else if journal {
            writeToStandardError("<\(level.rawValue)>\(text)\n")
        } else {
            writeToStandardError("\(Self.timestamp()) \(level): \(text)\n")
        }
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }

    /// `JOURNAL_STREAM=DEVICE:INODE` names the stream systemd handed us; it
    /// counts only if stderr is still that stream (not redirected since).
    static func standardErrorIsJournal(_ value: String?) -> Bool {
        guard let value, let colon = value.firstIndex(of: ":"),
            let device = UInt64(value[..<colon]), let inode = UInt64(value[value.index(after: colon)...])
        else { return false }
        // A standard error that cannot be looked at is no journal stream.
        guard let info = try? FileDescriptor.status(2) else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = now.tv_nsec / 1_000_000
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}

extension String {
    /// Log lines stay lines: a newline in a message cannot forge a second entry.
    func replacingNewlines() -> String {
        guard contains(where: \.isNewline) else { return self }
        return String(map { $0.isNewline ? " " : $0 })
    }
}
