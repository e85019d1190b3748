import Foundation
import Glibc
import Testing

/// A graphical session with nobody at it: an X server in memory (Xvfb), a
/// session D-Bus of its own, a notification daemon (dunst) and a
/// `dbus-monitor` recording every call to the notification service. Tests
/// look at it (`screenshot`) and answer its windows as a person would,
/// through `xdotool`. Everything it started ends with it.
public final class DesktopSession {
    /// The programs it runs, from Debian's packages (`scripts/install-deps`
    /// installs them for `make test`).
    public static let programs = ["Xvfb", "dbus-daemon", "dbus-monitor", "dunst", "xdotool", "import", "zenity", "pinentry-gtk-2", "gdbus"]
    public static var missingPrograms: [String] { programs.filter { !isInstalled($0) } }

    public let display: String
    public let busAddress: String
    /// DISPLAY and DBUS_SESSION_BUS_ADDRESS, for the programs that join it.
    public var environment: [String: String] {
        ["DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": busAddress, "NO_AT_BRIDGE": "1"]
    }

    private let server: StartedProgram
    private let bus: StartedProgram
    private var notificationDaemon: StartedProgram?
    private var monitor: StartedProgram?

    public init() throws {
        let number = try Self.freeDisplayNumber()
        display = ":\(number)"
        let server = try StartedProgram("/usr/bin/Xvfb", [display, "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"])
        self.server = server
        try #require(
            waitUntil(timeout: .seconds(15)) { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") },
            "Xvfb did not start: \(server.standardError)")
        let bus = try StartedProgram("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--print-address=1"])
        self.bus = bus
        var address = ""
        _ = waitUntil(timeout: .seconds(10)) {
            address = bus.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
            return !address.isEmpty
        }
        try #require(!address.isEmpty, "dbus-daemon gave no address: \(bus.standardError)")
        busAddress = address
        monitor = try StartedProgram(
            "/usr/bin/dbus-monitor", ["--session", "interface='org.freedesktop.Notifications'"], environment: environment)
        notificationDaemon = try StartedProgram("/usr/bin/dunst", [], environment: environment)
        let owned = waitUntil(timeout: .seconds(10)) {
            (try? run("/usr/bin/gdbus", [
                "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                "--method", "org.freedesktop.DBus.GetNameOwner", "org.freedesktop.Notifications",
            ], environment: environment, timeout: .seconds(5)).status) == 0
        }
        try #require(owned, "dunst did not take org.freedesktop.Notifications: \(notificationDaemon?.standardError ?? "")")
    }

    deinit {
        for program in [notificationDaemon, monitor, Optional(bus), Optional(server)] {
            program?.signal(SIGTERM)
            _ = program?.finish(within: .seconds(5))
        }
    }

    /// Every call to the notification service so far, as dbus-monitor printed it.
    public var notificationTraffic: String { monitor?.standardOutput ?? "" }

    /// The window whose title is exactly `title`, once it shows (nil after `timeout`).
    public func waitForWindow(titled title: String, timeout: Duration = .seconds(20)) -> String? {
        var window: String?
        _ = waitUntil(timeout: timeout) {
            window = visibleWindows(titled: title)?.first
            return window != nil
        }
        return window
    }

    /// Whether no window titled `title` shows any more, within `timeout`.
    public func waitForWindowToClose(titled title: String, timeout: Duration = .seconds(10)) -> Bool {
        waitUntil(timeout: timeout) { visibleWindows(titled: title)?.isEmpty ?? false }
    }

    /// Whether `window` is gone (another of the same title may show), within `timeout`.
    public func waitForWindowToClose(_ window: String, titled title: String, timeout: Duration = .seconds(10)) -> Bool {
        waitUntil(timeout: timeout) { visibleWindows(titled: title).map { !$0.contains(window) } ?? false }
    }

    /// The ids of the windows showing with exactly this title; nil when xdotool failed.
    private func visibleWindows(titled title: String) -> [String]? {
        let result = try? run(
            "/usr/bin/xdotool", ["search", "--onlyvisible", "--name", "^\(Self.regexEscaped(title))$"], environment: environment,
            timeout: .seconds(20))
        // xdotool exits 1 when it finds nothing.
        guard let result, result.status == 0 || result.standardOutput.isEmpty else { return nil }
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    /// The whole screen as a PNG at `path` (ImageMagick's `import`).
    public func screenshot(to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let taken = try run("/usr/bin/import", ["-display", display, "-window", "root", path], environment: environment, timeout: .seconds(30))
        try #require(taken.status == 0, "import: \(taken.standardError)")
    }

    /// What a person does at a dialog: type text, or press a key
    /// (xdotool's names: "Return", "ctrl+a", "Down", "space").
    public enum Input: Sendable {
        case text(String)
        case key(String)
    }

    /// Gives `window` the keyboard, then does `inputs` in order.
    public func answer(_ window: String, with inputs: [Input]) throws {
        _ = try xdotool(["windowfocus", "--sync", window])
        for input in inputs {
            switch input {
            case .text(let text): _ = try xdotool(["type", "--delay", "20", text])
            case .key(let key): _ = try xdotool(["key", key])
            }
        }
    }

    private func xdotool(_ arguments: [String]) throws -> String {
        let result = try run("/usr/bin/xdotool", arguments, environment: environment, timeout: .seconds(20))
        return result.status == 0 ? result.standardOutput : ""
    }

    private static func regexEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// A display number no X server uses.
    private static func freeDisplayNumber() throws -> Int {
        for _ in 0..<50 {
            let number = Int.random(in: 100...999)
            if !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") && !FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") {
                return number
            }
        }
        throw DesktopSessionError.noFreeDisplay
    }
}

enum DesktopSessionError: Error { case noFreeDisplay }
