import Glibc

/// Another process's hold on a file, as the kernel reports it.
public struct LockHolder: Sendable, Equatable, CustomStringConvertible {
    public let pid: pid_t
    /// `/proc/PID/comm`; nil where the process is not visible to us (another
    /// user's under `ProtectProc=invisible`, or gone already).
    public let command: String?

    public init(pid: pid_t, command: String?) {
        self.pid = pid
        self.command = command
    }

    public var description: String { command.map { "\($0) (pid \(pid))" } ?? "pid \(pid)" }
}

/// `flock(2)`, and who holds a lock that `flock` could not take.
public enum FileLocks {
    /// Takes an exclusive lock on the open file without waiting: true when
    /// taken, false when another open file holds one (`EWOULDBLOCK`).
    public static func tryLockExclusive(_ fd: Int32) throws(SystemError) -> Bool {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            switch errno {
            case EINTR: continue
            case EWOULDBLOCK: return false
            default: throw SystemError("flock")
            }
        }
        return true
    }

    /// Who holds a lock on the file at `path`, from `/proc/locks` (each lock
    /// with its holder's pid and the file's device and inode, proc(5)); nil
    /// when the kernel does not say (no lock now, or `/proc/locks` hidden,
    /// as `ProcSubset=pid` hides it).
    public static func holder(ofFileAt path: String) -> LockHolder? {
        var info = stat()
        guard stat(path, &info) == 0, let locks = AtomicFile.text("/proc/locks"),
            let pid = holderPID(device: info.st_dev, inode: info.st_ino, locks: locks)
        else { return nil }
        return LockHolder(pid: pid, command: ProcFiles.command(pid: pid))
    }

    /// The pid holding a lock on (`device`, `inode`) in the text of
    /// `/proc/locks`. Lines of waiters (`->`) are skipped: they hold nothing.
    ///
    ///     1: FLOCK  ADVISORY  WRITE 1234 00:05:567 0 EOF
    ///
    /// The kernel prints the device of the file's file system as hex
    /// major:minor, and the inode in decimal.
    static func holderPID(device: dev_t, inode: ino_t, locks: String) -> pid_t? {
        let wanted = "\(hex(major(device))):\(hex(minor(device))):\(inode)"
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] != "->", fields[5] == wanted, let pid = pid_t(fields[4]), pid > 0 else {
                continue
            }
            return pid
        }
        return nil
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return digits.count < 2 ? "0" + digits : digits
    }

    /// glibc's `major()` and `minor()`, which Swift's Glibc module does not
    /// import (they are macros).
    static func major(_ device: dev_t) -> UInt32 {
        UInt32(truncatingIfNeeded: ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff))
    }

    static func minor(_ device: dev_t) -> UInt32 {
        UInt32(truncatingIfNeeded: (device & 0xff) | ((device >> 12) & ~0xff))
    }
}

extension ProcFiles {
    /// `/proc/PID/comm`: the name the kernel knows the process by; nil when
    /// it cannot be read (the process is gone, or hidden from us).
    public static func command(pid: pid_t) -> String? {
        guard let bytes = try? AtomicFile.read("/proc/\(pid)/comm") else { return nil }
        var name = bytes
        while name.last == UInt8(ascii: "\n") { name.removeLast() }
        // Any process may name itself anything (prctl PR_SET_NAME): what
        // would steer a terminal is shown as '?'.
        for index in name.indices where name[index] < 0x20 || name[index] == 0x7F { name[index] = UInt8(ascii: "?") }
        return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
    }
}
