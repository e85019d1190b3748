import SystemKit

/// The touch cue as a desktop notification (`org.freedesktop.Notifications`
/// on the session bus, through GLib's `gdbus`): shown while a request waits
/// for a touch or a finger, replaced when the cue changes, closed when the
/// wait is over. Calls are made in order on a thread of their own, so that
/// a slow bus never holds up the agent's prompts.
final class DesktopNotifications: Sendable {
    private let program: String
    private let jobs = BlockingQueue<@Sendable () -> Void>()
    /// Each request's notification on screen, by the daemon's name for it.
    private let shown = Protected<[String: UInt32]>([:])

    init(program: String = "gdbus") {
        self.program = program
        let jobs = jobs
        startThread(name: "agent-notify") {
            while let job = jobs.pop(timeoutMilliseconds: -1) { job() }
        }
    }

    deinit { jobs.close() }

    /// Shows `summary` and `body` for `request`, in place of what it showed.
    func show(for request: String, summary: String, body: String) {
        jobs.push { [self] in
            let replacing = shown.withLock { $0[request] } ?? 0
            let reply = call("Notify", [
                Self.gvariantString("authkeyd"), "uint32 \(replacing)", Self.gvariantString("security-key"),
                Self.gvariantString(summary), Self.gvariantString(body), "@as []", "@a{sv} {}", "int32 0",
            ])
            guard let id = reply.flatMap(Self.notificationID) else { return }
            shown.withLock { $0[request] = id }
        }
    }

    /// Closes `request`'s notification, if it shows one.
    func close(for request: String) {
        jobs.push { [self] in
            guard let id = shown.withLock({ $0.removeValue(forKey: request) }) else { return }
            _ = call("CloseNotification", ["uint32 \(id)"])
        }
    }

    /// `gdbus call` of one method of the notification service; its output.
    private func call(_ method: String, _ arguments: [String]) -> String? {
        let command = [
            "call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
            "--method", "org.freedesktop.Notifications.\(method)",
        ] + arguments
        guard let process = try? ChildProcess(program, command, standardOutput: .pipe, standardError: .null) else { return nil }
        guard let output = process.outputIfSucceeded(limit: 4096) else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    /// `(uint32 7,)`, Notify's reply as gdbus prints it: 7.
    static func notificationID(_ reply: String) -> UInt32? {
        guard let type = reply.firstRange(of: "uint32 ") else { return nil }
        return UInt32(reply[type.upperBound...].prefix { $0.isNumber })
    }

    /// A string in GVariant's text form, so that gdbus takes a summary or a
    /// program's name as text whatever it holds.
    static func gvariantString(_ text: String) -> String {
        "'" + text.replacingEach(["'": "\\'", "\\": "\\\\", "\n": "\\n"]) + "'"
    }
}
