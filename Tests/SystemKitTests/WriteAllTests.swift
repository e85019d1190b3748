import Glibc
import SystemKit
import Testing

@Suite struct WriteAllTests {
    /// More than a socket buffer holds at once, so that `send` returns
    /// short and the loop must go on where it stopped.
    @Test func sendAllDeliversEveryByteInOrder() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let received = BlockingQueue<[UInt8]>()
        let readEnd = pair[1]
        let expected = bytes.count
        startThread(name: "reader") {
            // Read straight into one buffer: appended chunk by chunk, the
            // debug build's unspecialised copies under ThreadSanitizer took
            // longer than the wait below. One byte more than was sent, so
            // that an extra byte would show.
            var all = [UInt8](repeating: 0, count: expected + 1)
            var filled = 0
            all.withUnsafeMutableBytes { buffer in
                while filled < buffer.count, case let count = read(readEnd, buffer.baseAddress! + filled, buffer.count - filled), count > 0 {
                    filled += count
                }
            }
            received.push(Array(all[0..<filled]))
        }
        try UnixSocket.sendAll(pair[0], bytes)
        close(pair[0])
        // A bound for a stuck reader, not a time under test: generous, for
        // the sanitized builds on a busy machine.
        let got = received.pop(timeoutMilliseconds: 60_000)
        // Compared here, not in the expectation: a failure would print both
        // megabytes.
        let same = got == bytes
        #expect(same, "the reader got \(got.map { "\($0.count) bytes" } ?? "nothing"), not the \(bytes.count) sent, in order")
    }

    @Test func aPeerThatHasGoneIsAnErrorNotASignal() {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        close(pair[1])
        defer { close(pair[0]) }
        #expect(throws: SystemError("send", code: EPIPE)) { try UnixSocket.sendAll(pair[0], [1, 2, 3]) }
    }

    @Test func kernelRandomBytesFillsWhatIsAskedFor() throws {
        let bytes = try kernelRandomBytes(1000)
        #expect(bytes.count == 1000)
        #expect(Set(bytes).count > 200, "1000 random bytes take most of the 256 values")
        #expect(try kernelRandomBytes(0).isEmpty)
    }
}
