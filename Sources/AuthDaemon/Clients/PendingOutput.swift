import Dispatch

/// The client connections with output queued during the current turn on
/// the daemon's queue, written together once the turn's work is done.
///
/// A line written the moment it was made woke its client at once, and on a
/// machine with few cores the client took the core from the daemon then
/// and there: the `waitingForTouch` status of an assertion was read and
/// parsed by the client before the daemon had handed the call to the key's
/// thread, and the `processing` status and the result, written one after
/// the other, woke the client twice (sched_switch traces of bench row 1:
/// a switch at nearly every `send`). Written after the turn, the key's
/// thread already has its call, and the lines of one turn go out in one
/// write per client.
///
/// The write is a block queued behind the current work on the same queue,
/// so it comes before anything that waits for the client's answer, and
/// each connection writes its lines in the order they were queued. One for
/// all the connections of a daemon; confined to its queue, as they are.
final class PendingOutput: @unchecked Sendable {
    private let queue: DispatchQueue
    private var waiting: [ClientConnection] = []

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Writes `connection`'s queued output after the current turn.
    func schedule(_ connection: ClientConnection) {
        waiting.append(connection)
        guard waiting.count == 1 else { return }
        queue.async { [self] in writeAll() }
    }

    private func writeAll() {
        let connections = waiting
        waiting = []
        for connection in connections { connection.writeScheduled() }
    }
}
