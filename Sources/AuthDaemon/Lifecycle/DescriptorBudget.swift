import Glibc
import SystemKit

/// How many descriptors the daemon may give to clients: its soft
/// RLIMIT_NOFILE less a reserve for its own work.
///
/// The reserve is not a nicety. libdispatch makes its timerfd when it first
/// needs one, and a timer it cannot make one for never fires, silently
/// (seen with `asyncAfter` at EMFILE): out of descriptors, every request's
/// deadline would be lost, and with it the timer that resumes accepting.
struct DescriptorBudget {
    /// Descriptors kept for the daemon's own use, never given to clients:
    /// the listener, keys (a USB key plugged in later), the store's writes
    /// (a temporary and its directory), inotify, udev, logs, timers.
    static let reserve = 64

    /// The soft RLIMIT_NOFILE in force.
    private(set) var limit = 1024

    /// systemd starts a service with a soft descriptor limit of 1024 (and a
    /// far higher hard one), and expects a program that needs more to raise
    /// it: each client is a descriptor, and max-clients may exceed 1024.
    /// Raises the soft limit to the hard one.
    mutating func raiseLimit() {
        limit = OpenFileLimit.raiseToHard()
    }

    /// Descriptors `clients` connections and the reserve need together.
    static func needed(for clients: Int) -> Int { clients + reserve }

    /// The descriptor number at which accepting stops (half the limit,
    /// should the limit be tiny).
    var ceiling: Int32 { Int32(clamping: max(limit - Self.reserve, limit / 2)) }

    /// Whether the client just given descriptor `fd` used up the clients'
    /// share. Descriptors are numbered lowest first, so a descriptor's
    /// number is a floor on how many are open.
    func isSpent(byClient fd: Int32) -> Bool { fd >= ceiling }

    /// Whether a client accepted now would stay below the ceiling: the
    /// lowest free descriptor, found by duplicating `fd`, is the one it
    /// would get.
    func hasRoomForClient(probingWith fd: Int32) -> Bool {
        // Failing to probe (EMFILE: no descriptor is free) is no room.
        guard let probe = try? FileDescriptor.duplicate(fd) else { return false }
        FileDescriptor.close(probe)
        return probe < ceiling
    }
}
