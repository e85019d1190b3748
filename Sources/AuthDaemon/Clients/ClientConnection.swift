import AuthProtocol
import Dispatch
import Glibc
import SystemKit

/// One client's socket: non-blocking reads framed into lines, and writes
/// made once the current turn on the queue is done (`PendingOutput`),
/// buffered for a client that reads slowly.
///
/// Confined to the daemon's queue: every method, the readiness callbacks
/// and the write source's handler run there, so nothing here is shared
/// between threads.
final class ClientConnection: @unchecked Sendable {
    /// What the client sent. A line's bytes are valid only during the callback.
    enum Event: @unchecked Sendable {
        case line(UnsafeBufferPointer<UInt8>)
        case lineTooLong
        /// The client closed its end; `hungUp` when both directions are gone
        /// (the process died or closed the socket), not just its writing side.
        case endOfInput(hungUp: Bool)
    }

    let fd: Int32
    private let queue: DispatchQueue
    private var framer: LineFramer
    private let readiness: ClientReadiness
    /// Whether `readiness` still reports this socket's input.
    private var reading = false
    private var writeSource: (any DispatchSourceWrite)?
    private var outbox: [UInt8] = []
    private var outboxStart = 0
    private var closeWhenFlushed = false
    /// Whether `pendingOutput` writes the outbox after this turn.
    private var writeIsScheduled = false
    private let pendingOutput: PendingOutput
    private(set) var isClosed = false
    /// Dispatch sources (the write source) not yet cancelled; the
    /// descriptor may only be closed once none watches it any more, or a
    /// reused number could be watched by a stale source.
    private var liveSources = 0
    private var handler: ((Event) -> Void)?
    private var onClosed: (() -> Void)?
    /// A client that reads nothing while this much waits for it is dropped.
    static let maxOutboxBytes = 8 << 20
    /// Output past this much is written at once, not after the turn.
    static let deferredOutputBytes = 64 << 10
    private let readBuffer: ReadBuffer

    init(
        fd: Int32, queue: DispatchQueue, readiness: ClientReadiness, readBuffer: ReadBuffer, pendingOutput: PendingOutput,
        maxLineLength: Int
    ) {
        self.fd = fd
        self.queue = queue
        self.readiness = readiness
        self.readBuffer = readBuffer
        self.pendingOutput = pendingOutput
        framer = LineFramer(maxLineLength: maxLineLength)
    }

    /// Starts reading; `handler` receives the client's lines, `onClosed`
    /// runs once when the connection is gone, whoever closed it.
    func start(_ handler: @escaping (Event) -> Void, onClosed: @escaping () -> Void) {
        self.handler = handler
        self.onClosed = onClosed
        do {
            try readiness.watch(fd) { [weak self] in self?.readAvailable() }
            reading = true
        } catch {
            // Out of epoll watches (fs.epoll.max_user_watches): the client
            // cannot be served; it sees the connection close.
            close()
        }
    }

    private func stopReading() {
        guard reading else { return }
        reading = false
        readiness.forget(fd)
    }

    private func readAvailable() {
        let chunk = readBuffer.bytes
        while !isClosed {
            let count: Int
            do {
                // Nothing more for now: the read source calls again.
                guard let received = try UnixSocket.receive(fd, into: chunk, nonBlocking: true) else { return }
                count = received
            } catch {
                // A read error ends input as surely as end of input does.
                count = -1
            }
            if count > 0 {
                framer.feed(UnsafeRawBufferPointer(rebasing: chunk[0..<count])) { event in
                    switch event {
                    case .line(let line): handler?(.line(line))
                    case .lineTooLong: handler?(.lineTooLong)
                    }
                }
                // The handler was told (lineTooLong); nothing more is read.
                if framer.isBroken { return stopReading() }
                if count < chunk.count { return }
                continue
            }
            stopReading()
            handler?(.endOfInput(hungUp: count < 0 || peerHungUp()))
            return
        }
    }

    /// After end of input: did the peer shut down only its writing side
    /// (it still reads our replies) or is it gone?
    private func peerHungUp() -> Bool {
        var descriptors = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
        guard (try? waitForEvents(&descriptors, timeoutMilliseconds: 0)) != nil else { return true }
        return descriptors[0].revents & Int16(POLLHUP | POLLERR) != 0
    }

    /// Queues bytes for the client, written after the current turn (at
    /// once past `deferredOutputBytes`) as the socket takes them.
    func send(_ bytes: [UInt8]) {
        guard !isClosed, !closeWhenFlushed || outboxStart < outbox.count else { return }
        outbox.append(contentsOf: bytes)
        let queued = outbox.count - outboxStart
        guard queued <= Self.maxOutboxBytes else { return close() }
        // A client that is not reading: the write source writes when it can.
        if writeSource != nil { return }
        if queued > Self.deferredOutputBytes { return flush() }
        guard !writeIsScheduled else { return }
        writeIsScheduled = true
        pendingOutput.schedule(self)
    }

    /// `PendingOutput`'s turn: what was queued is written.
    func writeScheduled() {
        writeIsScheduled = false
        if writeSource == nil { flush() }
    }

    /// Sends what is queued, then closes.
    func closeAfterFlush() {
        closeWhenFlushed = true
        stopReading()
        flush()
    }

    private func flush() {
        while outboxStart < outbox.count && !isClosed {
            let written = outbox.withUnsafeBytes { raw in
                Result { () throws(SystemError) in
                    try UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: raw[outboxStart...]), nonBlocking: true)
                }
            }
            switch written {
            case .success(let count?) where count > 0:
                outboxStart += count
                continue
            case .success(nil):
                armWriteSource()
                return
            case .success, .failure:
                // The client is gone (EPIPE, ECONNRESET), or the socket broken.
                return close()
            }
        }
        // Replies can carry secrets (hmac-secret outputs): none stays behind.
        zeroSecret(&outbox)
        outbox.removeAll(keepingCapacity: outbox.capacity <= 65_536)
        outboxStart = 0
        writeSource?.cancel()
        writeSource = nil
        if closeWhenFlushed { close() }
    }

    private func armWriteSource() {
        guard writeSource == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.flush() }
        watch(source)
        writeSource = source
    }

    private func watch(_ source: any DispatchSourceProtocol) {
        liveSources += 1
        // Strong on purpose: the descriptor must be closed even if the
        // connection is let go before the cancellation completes.
        source.setCancelHandler { self.sourceCancelled() }
        source.resume()
    }

    private func sourceCancelled() {
        liveSources -= 1
        if isClosed && liveSources == 0 { FileDescriptor.close(fd) }
    }

    /// Closes at once; queued output is dropped.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        stopReading()
        writeSource?.cancel()
        writeSource = nil
        outbox = []
        if liveSources == 0 { FileDescriptor.close(fd) }
        let closed = onClosed
        onClosed = nil
        handler = nil
        closed?()
    }
}
