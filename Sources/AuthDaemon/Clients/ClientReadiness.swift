import Dispatch
import SystemKit

/// Tells the daemon's queue which client sockets have something to read:
/// one level-triggered epoll set for every client, watched by one Dispatch
/// source.
///
/// A Dispatch read source per client cost each request libdispatch's round
/// trip: its manager thread's `epoll_wait`, a hand-off to the queue's
/// thread (an eventfd write and a wake-up), then an `epoll_ctl` to re-arm
/// the one-shot registration (perf on bench row 3: most of the daemon's
/// time per request besides the reply's `sendto`). Here one turn on the
/// queue serves every client ready at that moment, and a registration
/// stays armed until the connection ends.
///
/// Confined to the daemon's queue, as the connections are.
final class ClientReadiness: @unchecked Sendable {
    private let epoll: Epoll
    private let source: any DispatchSourceRead
    /// What to call for each watched socket, by its token. Tokens are never
    /// reused, so an event read for a socket forgotten earlier in the same
    /// batch (its number perhaps reused since) finds nothing to call.
    private var handlers: [UInt64: () -> Void] = [:]
    private var tokens: [Int32: UInt64] = [:]
    private var nextToken: UInt64 = 1

    /// Ready sockets served per turn on the queue; more wait for the next
    /// turn, so that timers and tasks on the queue are not held up.
    init(queue: DispatchQueue, batch: Int = 256) throws(SystemError) {
        let epoll = try Epoll(capacity: batch)
        self.epoll = epoll
        source = DispatchSource.makeReadSource(fileDescriptor: epoll.descriptor, queue: queue)
        // The set's descriptor is closed when the set goes, after the
        // source stops watching it: the cancel handler holds the set.
        source.setCancelHandler { withExtendedLifetime(epoll) {} }
        source.setEventHandler { [weak self] in self?.serveReady() }
        source.resume()
    }

    deinit { source.cancel() }

    /// Calls `readable` on the queue whenever `fd` has input or its peer
    /// hung up, until `forget(fd)`.
    func watch(_ fd: Int32, _ readable: @escaping () -> Void) throws(SystemError) {
        let token = nextToken
        nextToken += 1
        try epoll.watch(fd, token: token)
        handlers[token] = readable
        tokens[fd] = token
    }

    /// Stops watching `fd`; call it before closing `fd`.
    func forget(_ fd: Int32) {
        guard let token = tokens.removeValue(forKey: fd) else { return }
        handlers[token] = nil
        epoll.forget(fd)
    }

    private func serveReady() {
        for token in epoll.ready(timeoutMilliseconds: 0) { handlers[token]?() }
    }
}
