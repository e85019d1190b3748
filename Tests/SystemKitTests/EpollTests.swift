import Glibc
import SystemKit
import Testing

/// SystemKit's epoll set (the daemon watches every client socket through
/// one): level-triggered input and hang-ups reported by token, a pollable
/// descriptor of its own, and round robin past its capacity.
@Suite struct EpollTests {
    /// A pipe whose ends close with the test.
    final class Pipe {
        let reading: Int32
        var writing: Int32?

        init() throws {
            (reading, writing) = try FileDescriptor.pipe()
        }

        deinit {
            FileDescriptor.close(reading)
            closeWriting()
        }

        func write(_ bytes: [UInt8] = [1]) throws { try FileDescriptor.writeAll(writing ?? -1, bytes) }

        func closeWriting() {
            if let writing { FileDescriptor.close(writing) }
            writing = nil
        }

        func drain() throws {
            var buffer = [UInt8](repeating: 0, count: 64)
            _ = try buffer.withUnsafeMutableBytes { try FileDescriptor.read(reading, into: $0) }
        }
    }

    @Test func inputIsReportedByItsTokenForAsLongAsItWaits() throws {
        let epoll = try Epoll()
        let pipe = try Pipe()
        // All 64 bits of the token come back (the kernel's event is packed).
        let token: UInt64 = 0xDEAD_BEEF_0000_0001
        try epoll.watch(pipe.reading, token: token)
        #expect(epoll.ready(timeoutMilliseconds: 0).isEmpty)

        try pipe.write([1, 2, 3])
        #expect(Array(epoll.ready(timeoutMilliseconds: 0)) == [token])
        // Level-triggered: still ready, since nothing was read.
        #expect(Array(epoll.ready(timeoutMilliseconds: 0)) == [token])
        try pipe.drain()
        #expect(epoll.ready(timeoutMilliseconds: 0).isEmpty)
    }

    /// A hang-up is news too: a pipe's writer gone, a socket's peer shut down.
    @Test func aHangUpIsReported() throws {
        let epoll = try Epoll()
        let pipe = try Pipe()
        try epoll.watch(pipe.reading, token: 1)
        pipe.closeWriting()
        #expect(Array(epoll.ready(timeoutMilliseconds: 0)) == [1])

        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { pair.forEach { FileDescriptor.close($0) } }
        try epoll.watch(pair[0], token: 2)
        #expect(Array(epoll.ready(timeoutMilliseconds: 0)) == [1])
        try #require(shutdown(pair[1], Int32(SHUT_WR)) == 0)
        #expect(Set(epoll.ready(timeoutMilliseconds: 0)) == [1, 2])
    }

    @Test func onlyTheReadyAreReportedAndAForgottenOneIsNot() throws {
        let epoll = try Epoll()
        let pipes = try (0..<3).map { _ in try Pipe() }
        for (index, pipe) in pipes.enumerated() { try epoll.watch(pipe.reading, token: UInt64(index + 10)) }
        try pipes[1].write()
        #expect(Array(epoll.ready(timeoutMilliseconds: 0)) == [11])
        try pipes[2].write()
        #expect(Set(epoll.ready(timeoutMilliseconds: 0)) == [11, 12])

        epoll.forget(pipes[1].reading)
        #expect(Array(epoll.ready(timeoutMilliseconds: 0)) == [12])
        // Watched again, under another token.
        try epoll.watch(pipes[1].reading, token: 99)
        #expect(Set(epoll.ready(timeoutMilliseconds: 0)) == [12, 99])
    }

    @Test func watchingWhatCannotBeWatchedThrows() throws {
        let epoll = try Epoll()
        let pipe = try Pipe()
        try epoll.watch(pipe.reading, token: 1)
        #expect(throws: SystemError("epoll_ctl", code: EEXIST)) { try epoll.watch(pipe.reading, token: 2) }
        #expect(throws: SystemError("epoll_ctl", code: EBADF)) { try epoll.watch(999_999, token: 3) }
        // Forgetting what is not watched is harmless.
        epoll.forget(999_999)
        try pipe.write()
        #expect(Array(epoll.ready(timeoutMilliseconds: 0)) == [1])
    }

    /// The set's own descriptor is readable while a watched one is ready:
    /// the daemon's one Dispatch source waits on it. It is close-on-exec.
    @Test func theSetsDescriptorIsPollable() throws {
        let epoll = try Epoll()
        #expect(fcntl(epoll.descriptor, F_GETFD) & FD_CLOEXEC != 0)
        let pipe = try Pipe()
        try epoll.watch(pipe.reading, token: 7)
        var descriptors = [pollfd(fd: epoll.descriptor, events: Int16(POLLIN), revents: 0)]
        #expect(try waitForEvents(&descriptors, timeoutMilliseconds: 0) == 0)
        try pipe.write()
        #expect(try waitForEvents(&descriptors, timeoutMilliseconds: 0) == 1)
        #expect(descriptors[0].revents & Int16(POLLIN) != 0)
    }

    @Test func readyWaitsForInputUpToItsTimeout() throws {
        let epoll = try Epoll()
        let pipe = try Pipe()
        try epoll.watch(pipe.reading, token: 5)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(epoll.ready(timeoutMilliseconds: 50).isEmpty)
        #expect(clock.now - started >= .milliseconds(45))

        // For ever (-1): until the input another thread writes arrives.
        let writing = try #require(pipe.writing)
        startThread(name: "epoll-test-writer") {
            usleep(50_000)
            _ = write(writing, [1], 1)
        }
        #expect(Array(epoll.ready(timeoutMilliseconds: -1)) == [5])
    }

    /// More ready than the capacity: each call reports at most that many,
    /// and in turn every one of them (epoll(7): successive calls round
    /// robin through the ready set), so a busy client cannot starve the rest.
    @Test func pastItsCapacityEveryReadyDescriptorHasItsTurn() throws {
        let epoll = try Epoll(capacity: 2)
        let pipes = try (0..<5).map { _ in try Pipe() }
        for (index, pipe) in pipes.enumerated() {
            try epoll.watch(pipe.reading, token: UInt64(index))
            try pipe.write()
        }
        var seen: Set<UInt64> = []
        for _ in 0..<3 {
            let batch = epoll.ready(timeoutMilliseconds: 0)
            #expect(batch.count == 2)
            seen.formUnion(batch)
        }
        #expect(seen == [0, 1, 2, 3, 4])
    }
}
