import Glibc
import SystemKit
import Testing

@Suite struct SocketIOTests {
    private func pair(_ type: Int32 = Int32(SOCK_SEQPACKET.rawValue)) throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else { throw SystemError("socketpair") }
        return (ends[0], ends[1])
    }

    @Test func sendAndReceiveCarryOneMessageAndZeroMeansClosed() throws {
        let (a, b) = try pair()
        defer { FileDescriptor.close(a) }
        let sent = try [UInt8](repeating: 9, count: 64).withUnsafeBytes { try UnixSocket.send(b, $0) }
        #expect(sent == 64)
        var buffer = [UInt8](repeating: 0, count: 65)
        #expect(try buffer.withUnsafeMutableBytes { try UnixSocket.receive(a, into: $0) } == 64)
        #expect(try buffer.withUnsafeMutableBytes { try UnixSocket.receive(a, into: $0, nonBlocking: true) } == nil)
        FileDescriptor.close(b)
        #expect(try buffer.withUnsafeMutableBytes { try UnixSocket.receive(a, into: $0) } == 0)
    }

    @Test func sendToAPeerThatIsGoneIsEPIPENotASignal() throws {
        let (a, b) = try pair(Int32(SOCK_STREAM.rawValue))
        defer { FileDescriptor.close(a) }
        FileDescriptor.close(b)
        #expect(throws: SystemError("send", code: EPIPE)) { try [1].withUnsafeBytes { try UnixSocket.send(a, $0) } }
    }

    @Test func sendGivesNilWhenTheBufferIsFull() throws {
        let (a, b) = try pair(Int32(SOCK_STREAM.rawValue))
        defer { FileDescriptor.close(a); FileDescriptor.close(b) }
        let chunk = [UInt8](repeating: 1, count: 65_536)
        var total = 0
        while let sent = try chunk.withUnsafeBytes({ try UnixSocket.send(a, $0, nonBlocking: true) }) { total += sent }
        #expect(total > 0)
    }

    @Test func shutdownWakesAReaderWithEndOfInput() throws {
        let (a, b) = try pair()
        defer { FileDescriptor.close(a); FileDescriptor.close(b) }
        try UnixSocket.shutdown(a)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try buffer.withUnsafeMutableBytes { try UnixSocket.receive(b, into: $0) } == 0)
    }

    @Test func aBadDescriptorGivesEBADF() {
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(throws: SystemError("recv", code: EBADF)) {
            try buffer.withUnsafeMutableBytes { try UnixSocket.receive(999_999, into: $0) }
        }
        #expect(throws: SystemError("send", code: EBADF)) { try [1].withUnsafeBytes { try UnixSocket.send(999_999, $0) } }
        #expect(throws: SystemError("shutdown", code: EBADF)) { try UnixSocket.shutdown(999_999) }
    }

    @Test func aDescriptorThatIsNotASocketGivesENOTSOCK() throws {
        let (reading, writing) = try FileDescriptor.pipe()
        defer { FileDescriptor.close(reading); FileDescriptor.close(writing) }
        #expect(throws: SystemError("shutdown", code: ENOTSOCK)) { try UnixSocket.shutdown(reading) }
    }
}
