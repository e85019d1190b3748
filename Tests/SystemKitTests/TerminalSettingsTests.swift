import Glibc
import SystemKit
import Testing

@Suite struct TerminalSettingsTests {
    /// The two ends of a new pseudo-terminal: (controlling side, terminal).
    /// (`posix_openpt` and friends are not in Swift's Glibc module; these
    /// are the ioctls they make.)
    private func pseudoTerminal() throws -> (Int32, Int32) {
        let controller = try FileDescriptor.open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        // TIOCSPTLCK and TIOCGPTN (asm-generic/ioctls.h), which the module leaves out too.
        guard ioctl(controller, 0x4004_5431, &unlock) == 0, ioctl(controller, 0x8004_5430, &number) == 0 else {
            FileDescriptor.close(controller)
            throw SystemError("ioctl(/dev/ptmx)")
        }
        let terminal = try FileDescriptor.open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        return (controller, terminal)
    }

    @Test func settingsSetAreTheSettingsReadBack() throws {
        let (controller, terminal) = try pseudoTerminal()
        defer { FileDescriptor.close(terminal); FileDescriptor.close(controller) }
        var quiet = try TerminalSettings.current(terminal)
        #expect(quiet.c_lflag & tcflag_t(ECHO) != 0, "a new terminal echoes")
        quiet.c_lflag &= ~tcflag_t(ECHO)
        try TerminalSettings.set(terminal, quiet, .afterOutputDroppingInput)
        #expect(try TerminalSettings.current(terminal).c_lflag & tcflag_t(ECHO) == 0)
        quiet.c_lflag |= tcflag_t(ECHO)
        try TerminalSettings.set(terminal, quiet, .now)
        #expect(try TerminalSettings.current(terminal).c_lflag & tcflag_t(ECHO) != 0)
    }

    @Test func whatIsNotATerminalGivesENOTTYAndABadDescriptorEBADF() throws {
        let (reading, writing) = try FileDescriptor.pipe()
        defer { FileDescriptor.close(reading); FileDescriptor.close(writing) }
        #expect(throws: SystemError("tcgetattr", code: ENOTTY)) { try TerminalSettings.current(reading) }
        #expect(throws: SystemError("tcsetattr", code: EBADF)) { try TerminalSettings.set(999_999, termios(), .now) }
    }
}
