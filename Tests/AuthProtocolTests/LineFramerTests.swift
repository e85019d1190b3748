import AuthProtocol
import Testing

/// The framer is pure: the same lines come out however the bytes are cut
/// (swift-nio's ByteToMessageDecoderVerifier idea).
@Suite struct LineFramerTests {
    static let stream = Array(#"{"a":1}"#.utf8) + [0x0A] + Array(#"{"b":"x\ny"}"#.utf8) + [0x0D, 0x0A]
        + [0x0A, 0x20, 0x0A] + Array("[3]".utf8) + [0x0A] + Array("unfinished".utf8)

    func lines(feeding chunks: [[UInt8]], limit: Int = 1 << 20) -> (lines: [String], tooLong: Bool, buffered: Int) {
        var framer = LineFramer(maxLineLength: limit)
        var lines: [String] = []
        var tooLong = false
        for chunk in chunks {
            framer.feed(chunk) { event in
                switch event {
                case .line(let bytes): lines.append(String(decoding: bytes, as: UTF8.self))
                case .lineTooLong: tooLong = true
                }
            }
        }
        return (lines, tooLong, framer.bufferedByteCount)
    }

    @Test func oneByteAtATimeEqualsAllAtOnce() {
        let whole = lines(feeding: [Self.stream])
        let byByte = lines(feeding: Self.stream.map { [$0] })
        #expect(whole.lines == [#"{"a":1}"#, #"{"b":"x\ny"}"#, "[3]"])
        #expect(byByte.lines == whole.lines)
        #expect(whole.buffered == "unfinished".utf8.count && byByte.buffered == whole.buffered)
        for split in 1..<Self.stream.count {
            let two = lines(feeding: [Array(Self.stream[..<split]), Array(Self.stream[split...])])
            #expect(two.lines == whole.lines, "split at \(split)")
        }
    }

    @Test func manyMessagesInOneChunk() {
        let many = Array(repeating: Array(#"{"jsonrpc":"2.0"}"#.utf8) + [0x0A], count: 1000).flatMap { $0 }
        #expect(lines(feeding: [many]).lines.count == 1000)
    }

    @Test func theLimitIsCheckedBeforeBuffering() {
        // A line exactly at the limit is fine; one byte more is not, and the
        // framer never holds more than the limit.
        let atLimit = lines(feeding: [[UInt8](repeating: 0x41, count: 100) + [0x0A]], limit: 100)
        #expect(atLimit.lines.count == 1 && !atLimit.tooLong)
        let over = lines(feeding: [[UInt8](repeating: 0x41, count: 60), [UInt8](repeating: 0x41, count: 60)], limit: 100)
        #expect(over.tooLong)
        #expect(over.buffered == 0)
        let overInOne = lines(feeding: [[UInt8](repeating: 0x41, count: 101) + [0x0A]], limit: 100)
        #expect(overInOne.tooLong && overInOne.lines.isEmpty)
    }

    @Test func nothingIsFramedAfterTheLimitWasBroken() {
        var framer = LineFramer(maxLineLength: 4)
        var events = 0
        framer.feed(Array("123456\n{}\n".utf8)) { _ in events += 1 }
        framer.feed(Array("{}\n".utf8)) { _ in events += 1 }
        #expect(events == 1)
        #expect(framer.isBroken)
    }
}
