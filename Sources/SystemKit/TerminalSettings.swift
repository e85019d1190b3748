import Glibc

/// A terminal's settings (`termios`): read, and set back, each result
/// returned or thrown.
public enum TerminalSettings {
    /// When new settings take effect.
    public enum Timing: Sendable {
        /// At once (`TCSANOW`).
        case now
        /// Once the output is written, dropping input not yet read
        /// (`TCSAFLUSH`): what was typed before cannot be read under them.
        case afterOutputDroppingInput

        var rawValue: Int32 {
            switch self {
            case .now: return TCSANOW
            case .afterOutputDroppingInput: return TCSAFLUSH
            }
        }
    }

    /// `tcgetattr`; fails with ENOTTY on what is not a terminal.
    public static func current(_ fd: Int32) throws(SystemError) -> termios {
        var settings = termios()
        try retryingOnInterrupt("tcgetattr") { tcgetattr(fd, &settings) }
        return settings
    }

    /// `tcsetattr`. Async-signal-safe (a signal handler puts the terminal
    /// back with it): it allocates nothing, unless it fails.
    public static func set(_ fd: Int32, _ settings: termios, _ timing: Timing) throws(SystemError) {
        var settings = settings
        try retryingOnInterrupt("tcsetattr") { tcsetattr(fd, timing.rawValue, &settings) }
    }
}
