import Glibc
import SystemKit
import Testing

@Suite struct FileDescriptorTests {
    /// A descriptor number that is certainly not open.
    private static let closedDescriptor: Int32 = 999_999

    @Test func aPipeCarriesBytesAndBothEndsAreCloseOnExec() throws {
        let (reading, writing) = try FileDescriptor.pipe()
        defer { FileDescriptor.close(reading); FileDescriptor.close(writing) }
        #expect(fcntl(reading, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(writing, F_GETFD) & FD_CLOEXEC != 0)
        try FileDescriptor.writeAll(writing, [1, 2, 3])
        var buffer = [UInt8](repeating: 0, count: 8)
        let count = try buffer.withUnsafeMutableBytes { try FileDescriptor.read(reading, into: $0) }
        #expect(count == 3)
        #expect(buffer.prefix(3) == [1, 2, 3])
    }

    @Test func readGivesZeroAtEndOfInputAndNilWhenNothingIsThereYet() throws {
        let (reading, writing) = try FileDescriptor.pipe()
        defer { FileDescriptor.close(reading) }
        try setNonBlocking(reading)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try buffer.withUnsafeMutableBytes { try FileDescriptor.read(reading, into: $0) } == nil)
        FileDescriptor.close(writing)
        #expect(try buffer.withUnsafeMutableBytes { try FileDescriptor.read(reading, into: $0) } == 0)
    }

    @Test func writeGivesNilWhenANonBlockingPipeIsFull() throws {
        let (reading, writing) = try FileDescriptor.pipe()
        defer { FileDescriptor.close(reading); FileDescriptor.close(writing) }
        try setNonBlocking(writing)
        let chunk = [UInt8](repeating: 7, count: 65_536)
        var total = 0
        while let written = try chunk.withUnsafeBytes({ try FileDescriptor.write(writing, $0) }) { total += written }
        #expect(total > 0, "a pipe holds something before it is full")
        #expect(throws: SystemError("write", code: EAGAIN)) { try FileDescriptor.writeAll(writing, [1]) }
    }

    @Test func aBadDescriptorGivesEBADF() {
        var buffer = [UInt8](repeating: 0, count: 1)
        #expect(throws: SystemError("read", code: EBADF)) {
            try buffer.withUnsafeMutableBytes { try FileDescriptor.read(Self.closedDescriptor, into: $0) }
        }
        #expect(throws: SystemError("write", code: EBADF)) { try FileDescriptor.writeAll(Self.closedDescriptor, [1]) }
        #expect(throws: SystemError("fstat", code: EBADF)) { try FileDescriptor.status(Self.closedDescriptor) }
        #expect(FileDescriptor.close(Self.closedDescriptor) == SystemError("close", code: EBADF))
    }

    @Test func closeReportsNothingWhenItCloses() throws {
        let (reading, writing) = try FileDescriptor.pipe()
        #expect(FileDescriptor.close(reading) == nil)
        #expect(FileDescriptor.close(writing) == nil)
        #expect(FileDescriptor.close(writing) == SystemError("close", code: EBADF), "a second close is a bug, and says so")
    }

    @Test func openReportsAMissingFileAndStatusSaysWhatIsOpen() throws {
        #expect(throws: SystemError("open(/nonexistent/file)", code: ENOENT)) {
            try FileDescriptor.open("/nonexistent/file", O_RDONLY | O_CLOEXEC)
        }
        let fd = try FileDescriptor.open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { FileDescriptor.close(fd) }
        #expect(try FileDescriptor.status(fd).st_mode & S_IFMT == S_IFCHR)
    }

    @Test func waitForEventsSeesAReadablePipeAClosedDescriptorAndATimeout() throws {
        let (reading, writing) = try FileDescriptor.pipe()
        defer { FileDescriptor.close(reading); FileDescriptor.close(writing) }
        var descriptors = [pollfd(fd: reading, events: Int16(POLLIN), revents: 0)]
        #expect(try waitForEvents(&descriptors, timeoutMilliseconds: 0) == 0)
        try FileDescriptor.writeAll(writing, [1])
        descriptors = [
            pollfd(fd: reading, events: Int16(POLLIN), revents: 0),
            pollfd(fd: Self.closedDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        #expect(try waitForEvents(&descriptors, timeoutMilliseconds: 1000) == 2)
        #expect(descriptors[0].revents & Int16(POLLIN) != 0)
        #expect(descriptors[1].revents & Int16(POLLNVAL) != 0, "a descriptor not open is an event, not a failure")
    }
}

@Suite struct ZeroSecretTests {
    @Test func zeroSecretZeroesEveryByteAndKeepsTheCount() {
        var secret: [UInt8] = [1, 2, 3, 4]
        zeroSecret(&secret)
        #expect(secret == [0, 0, 0, 0])
        var empty: [UInt8] = []
        zeroSecret(&empty)
        #expect(empty.isEmpty)
    }
}

@Suite struct EnvironmentVariableTests {
    @Test func aVariableSetIsReadAndOneUnsetIsNil() {
        setenv("AUTHKEYD_TEST_VARIABLE", "value=1", 1)
        defer { unsetenv("AUTHKEYD_TEST_VARIABLE") }
        #expect(environmentVariable("AUTHKEYD_TEST_VARIABLE") == "value=1")
        #expect(environmentVariable("AUTHKEYD_TEST_VARIABLE_NOT_SET") == nil)
    }
}
