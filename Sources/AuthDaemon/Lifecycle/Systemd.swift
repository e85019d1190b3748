import Glibc
import SystemKit

/// systemd integration without libsystemd: socket activation and readiness
/// notification are both a few lines of protocol (sd_listen_fds(3),
/// sd_notify(3)).
enum Systemd {
    /// The first file descriptor systemd passes (`SD_LISTEN_FDS_START`).
    static let firstInheritedDescriptor: Int32 = 3

    /// The listening socket systemd passed us, if it passed one: only when
    /// `LISTEN_PID` is this process. The variables are removed so that no
    /// child process takes them for its own. Throws when the descriptor
    /// cannot be kept from the daemon's children (close-on-exec).
    static func inheritedListener(environment: [String: String]) throws(SystemError) -> Int32? {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = environment["LISTEN_PID"].flatMap({ pid_t($0) }), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count >= 1
        else { return nil }
        let fd = firstInheritedDescriptor
        try retryingOnInterrupt("fcntl(\(fd), F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return fd
    }

    /// Tells the service manager something (`READY=1`, `STOPPING=1`, …);
    /// does nothing outside systemd. A message that cannot be sent is
    /// logged with what its loss means: above all a lost `READY=1`, after
    /// which systemd takes the start (or the reload) for failed at its
    /// timeout.
    static func notify(_ state: String, environment: [String: String], logger: Logger) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        do throws(SystemError) { try sendDatagram(Array(state.utf8), to: path) } catch {
            let first = state.prefix { $0 != "\n" }
            let consequence = first == "READY=1"
                ? "systemd does not learn that the daemon is ready, and fails the start or reload at its timeout (Type=notify)"
                : "systemd does not hear it"
            logger.error("cannot send \(first) to the service manager (NOTIFY_SOCKET=\(path)): \(error); \(consequence)")
        }
    }
}
