/// How long the daemon may take to stop, and how that time is shared: one
/// number (`total`) from which the others follow, so that they cannot
/// disagree. A test holds the units' `TimeoutStopSec` and authkeyd(8)'s
/// "within five seconds" to it.
public enum ShutdownDeadline {
    /// From SIGTERM to exit, whatever happens: the services' hard deadline
    /// (`ServiceGroup`); authkeyd(8) rounds it up to five seconds.
    public static let total: Duration = .milliseconds(4500)
    /// The first two thirds: the operations in flight answer
    /// `shuttingDown` as their keys let go (`Broker.shutDown`).
    static let operations: Duration = total * 2 / 3
    /// Then about a fifth of it for the keys' threads to close their keys;
    /// the rest (half a second) is for the other services and the last
    /// flush of the registrations.
    static let keys: Duration = total * 2 / 9
}
