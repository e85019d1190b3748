import Dispatch
import Glibc
import SystemKit

/// Many client connections open at once, served by two threads: one
/// triggers (sends the requests, or makes a key appear), the other — the
/// caller — waits on all of them with epoll and stamps each line as it
/// arrives.
final class Swarm {
    let fds: [Int32]
    /// Bytes received after each connection's last full line.
    private var partial: [[UInt8]]
    /// Connections the daemon has not closed.
    private var open: [Bool]
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    private let epoll: Epoll

    /// Opens `count` connections to `path`, one after another.
    init(count: Int, path: String) throws {
        var fds: [Int32] = []
        fds.reserveCapacity(count)
        do {
            for _ in 0..<count {
                let fd = try UnixSocket.connect(path: path, kind: .stream)
                fds.append(fd)
                try setNonBlocking(fd)
            }
        } catch {
            fds.forEach { close($0) }
            throw BenchError("connection \(fds.count + 1) of \(count): \(error)")
        }
        self.fds = fds
        partial = Array(repeating: [], count: count)
        open = Array(repeating: true, count: count)
        do {
            epoll = try Epoll(capacity: 512)
            for (index, fd) in fds.enumerated() { try epoll.watch(fd, token: UInt64(index)) }
        } catch {
            fds.forEach { close($0) }
            throw error
        }
    }

    deinit { fds.forEach { close($0) } }

    var count: Int { fds.count }

    /// What one exchange saw, per connection.
    struct Outcome {
        /// When the first matching line arrived; nil if none did in time.
        var receivedAt: [UInt64?]
        /// That line (without its newline).
        var lines: [[UInt8]?]
        /// Connections the daemon closed before a matching line.
        var closed: Int
        var missing: Int { receivedAt.count { $0 == nil } }
    }

    /// Runs `trigger` on a thread of its own and receives, until every
    /// connection has received a line for which `matches` is true (or the
    /// time is up). Returns after `trigger` has finished.
    func exchange(
        timeoutMilliseconds: Int, matches: ([UInt8]) -> Bool, trigger: @escaping @Sendable () -> Void
    ) -> Outcome {
        var outcome = Outcome(receivedAt: Array(repeating: nil, count: count), lines: Array(repeating: nil, count: count), closed: 0)
        let done = DispatchSemaphore(value: 0)
        startThread(name: "bench-trigger") {
            trigger()
            done.signal()
        }
        let deadline = now() + UInt64(timeoutMilliseconds) * 1_000_000
        var remaining = open.count { $0 }
        while remaining > 0 {
            let current = now()
            guard current < deadline else { break }
            let ready = epoll.ready(timeoutMilliseconds: Int32(min(1000, (deadline - current) / 1_000_000 + 1)))
            // Everything reported now was there by now.
            let stamp = now()
            for token in ready {
                let index = Int(token)
                guard open[index] else { continue }
                if drain(index, stamp: stamp, into: &outcome, matches: matches) { remaining -= 1 }
            }
        }
        done.wait()
        return outcome
    }

    /// Reads what connection `index` has; true when it got its match (or
    /// closed) just now.
    private func drain(_ index: Int, stamp: UInt64, into outcome: inout Outcome, matches: ([UInt8]) -> Bool) -> Bool {
        let wasDone = outcome.receivedAt[index] != nil
        var matched = false
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(fds[index], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                partial[index].append(contentsOf: scratch[0..<count])
                while let newline = partial[index].firstIndex(of: 0x0A) {
                    let line = Array(partial[index][..<newline])
                    partial[index].removeSubrange(...newline)
                    if outcome.receivedAt[index] == nil && matches(line) {
                        outcome.receivedAt[index] = stamp
                        outcome.lines[index] = line
                        matched = true
                    }
                }
                if count == scratch.count { continue }
                return matched
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && errno == EAGAIN { return matched }
            // Closed (or broken): never watched again.
            open[index] = false
            epoll.forget(fds[index])
            outcome.closed += 1
            return !wasDone
        }
    }
}

/// Sends `lines[i]` on `fds[i]`, in order, stamping each send: the
/// trigger of a burst of requests.
func sendLines(_ lines: [[UInt8]], on fds: [Int32], stamps: SendStamps) {
    for (index, line) in lines.enumerated() {
        stamps.set(index, now())
        var offset = 0
        while offset < line.count {
            let written = line.withUnsafeBytes {
                send(fds[index], $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                offset += written
            } else if written < 0 && (errno == EINTR || errno == EAGAIN) {
                continue
            } else {
                break
            }
        }
    }
}

/// Send times, written by the trigger thread and read by the caller after
/// `exchange` returns (which waits for the trigger: that is the hand-over).
final class SendStamps: @unchecked Sendable {
    private var stamps: [UInt64]
    init(count: Int) { stamps = Array(repeating: 0, count: count) }
    func set(_ index: Int, _ value: UInt64) { stamps[index] = value }
    subscript(index: Int) -> UInt64 { stamps[index] }
}

/// Whether `line` contains `needle` (bytes).
func contains(_ line: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= line.count else { return false }
    for start in 0...(line.count - needle.count) where line[start] == needle[0] {
        if line[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}
