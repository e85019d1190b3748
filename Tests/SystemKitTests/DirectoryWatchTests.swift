import Glibc
import SystemKit
import Testing

@Suite struct DirectoryWatchTests {
    @Test func aFileCreatedInTheDirectoryMakesTheWatchReadable() throws {
        var template = Array("/tmp/authkeyd-watch-XXXXXX".utf8CString)
        let directory = String(cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
        let watch = try DirectoryWatch.open(directory, events: UInt32(IN_CREATE))
        defer { FileDescriptor.close(watch) }
        #expect(try !waitUntilReadable(watch, timeoutMilliseconds: 0), "no event yet")
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(try buffer.withUnsafeMutableBytes { try FileDescriptor.read(watch, into: $0) } == nil, "non-blocking")
        try AtomicFile.write([1], to: "\(directory)/created")
        #expect(try waitUntilReadable(watch, timeoutMilliseconds: 1000))
        #expect(try buffer.withUnsafeMutableBytes { try FileDescriptor.read(watch, into: $0) } ?? 0 > 0)
        #expect(fcntl(watch, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func aMissingDirectoryGivesENOENT() {
        #expect(throws: SystemError("inotify_add_watch(/nonexistent/directory)", code: ENOENT)) {
            try DirectoryWatch.open("/nonexistent/directory", events: UInt32(IN_CREATE))
        }
    }
}

/// Never run: the test only sets it and reads it back. (Raising the
/// signal would not show it either: Dispatch's threads, which the tests run
/// on, block signals.)
private let handler: SignalHandler = { _ in }

@Suite struct SignalHandlerTests {
    @Test func whatIsSetIsReturnedByTheNextSetSoItCanBePutBack() {
        let before = setSignalHandler(SIGUSR2, handler)
        #expect(before == nil, "SIGUSR2 starts with its default action")
        let ours = setSignalHandler(SIGUSR2, before)
        #expect(ours.map { unsafeBitCast($0, to: Int.self) } == unsafeBitCast(handler, to: Int.self))
        #expect(setSignalHandler(SIGUSR2, nil) == nil, "and the default is back")
    }
}
