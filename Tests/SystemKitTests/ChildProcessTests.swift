import Glibc
import SystemKit
import Testing

@Suite struct ChildProcessTests {
    @Test func theChildReadsItsInputAndItsOutputComesBack() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "read line; echo \"got $line\"; exit 3"], standardInput: .pipe, standardOutput: .pipe)
        try FileDescriptor.writeAll(try #require(child.input), Array("hello\n".utf8))
        #expect(child.readAllOutput().map { String(decoding: $0, as: UTF8.self) } == "got hello\n")
        #expect(child.wait() == .exited(3))
        #expect(child.wait() == .exited(3), "a second wait gives the same ending")
    }

    @Test func theEnvironmentIsTheParentsWithTheOverridesOnTop() throws {
        let child = try ChildProcess(
            "sh", ["-c", "echo \"$AUTHKEYD_TEST_VALUE:${PATH:+path}\""], environment: ["AUTHKEYD_TEST_VALUE": "over"], standardOutput: .pipe)
        #expect(child.readAllOutput().map { String(decoding: $0, as: UTF8.self) } == "over:path\n", "looked up in PATH, with PATH kept")
        #expect(child.wait() == .exited(0))
    }

    @Test func terminateEndsTheChildAndItsOutput() throws {
        let child = try ChildProcess("/bin/sleep", ["30"], standardOutput: .pipe)
        child.terminate()
        #expect(child.readAllOutput() == [], "the end of output once the child is gone")
        #expect(child.wait() == .signalled(SIGTERM))
    }

    /// The parent ignores SIGPIPE (the desktop agent does); the child must
    /// not inherit that, or a `yes | head` of its own would never end.
    @Test func theChildGetsDefaultSignalDispositions() throws {
        ignoreBrokenPipes()
        let child = try ChildProcess("/bin/sh", ["-c", "grep SigIgn /proc/self/status"], standardOutput: .pipe)
        let line = child.readAllOutput().map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(child.wait() == .exited(0))
        let mask = line.split(separator: "\t").last?.filter(\.isHexDigit) ?? ""
        let ignored = UInt64(mask, radix: 16)
        #expect(ignored.map { $0 & (1 << (UInt64(SIGPIPE) - 1)) } == 0, "the child ignores SIGPIPE: \(line)")
    }

    @Test func outputIfSucceededIsNilForAProgramThatFailed() throws {
        #expect(try ChildProcess("/bin/sh", ["-c", "echo partial; exit 1"], standardOutput: .pipe).outputIfSucceeded() == nil)
        #expect(try ChildProcess("/bin/sh", ["-c", "echo whole"], standardOutput: .pipe).outputIfSucceeded() == Array("whole\n".utf8))
    }

    @Test func aProgramThatDoesNotExistIsAnError() {
        #expect(throws: SystemError.self) { try ChildProcess("/nonexistent/program", []) }
    }
}
