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
        startThread(name: "reader") {
            var all: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while case let count = read(readEnd, &chunk, chunk.count), count > 0 { all += chunk[0..<count] }
            received.push(all)
        }
        try UnixSocket.sendAll(pair[0], bytes)
        close(pair[0])
        #expect(received.pop(timeoutMilliseconds: 10_000) == bytes)
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
