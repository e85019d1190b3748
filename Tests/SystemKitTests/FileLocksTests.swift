import Glibc
@testable import SystemKit
import Testing

/// Who holds a file's lock, as the kernel says in /proc/locks.
@Suite struct FileLocksTests {
    /// proc(5)'s lines: hex major:minor, decimal inode; a waiter's line
    /// (`->`) holds nothing; another file's lock is not this one's.
    @Test func theHolderIsReadFromProcLocks() {
        let device = makedev(0x00, 0x05)
        let locks = """
            1: POSIX  ADVISORY  WRITE 111 fd:01:4242 0 EOF
            2: FLOCK  ADVISORY  WRITE 222 00:05:4242 0 EOF
            2: -> FLOCK  ADVISORY  WRITE 333 00:05:4242 0 EOF
            3: FLOCK  ADVISORY  WRITE 444 00:1a:17 0 EOF
            """
        #expect(FileLocks.holderPID(device: device, inode: 4242, locks: locks) == 222)
        #expect(FileLocks.holderPID(device: makedev(0x00, 0x1a), inode: 17, locks: locks) == 444)
        #expect(FileLocks.holderPID(device: device, inode: 17, locks: locks) == nil)
        #expect(FileLocks.holderPID(device: makedev(0xfd, 0x01), inode: 4242, locks: "") == nil)
    }

    @Test func majorAndMinorSplitTheDeviceAsGlibcDoes() {
        let device = makedev(259, 70_000)
        #expect(FileLocks.major(device) == 259)
        #expect(FileLocks.minor(device) == 70_000)
    }

    /// A lock another open file holds is refused without waiting, and its
    /// holder (this process, here) is named.
    @Test func aLockHeldElsewhereIsRefusedAndItsHolderNamed() throws {
        let path = "/tmp/authkeyd-file-locks-\(getpid())"
        let first = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600)
        defer { unlink(path) }
        let second = try FileDescriptor.open(path, O_RDWR | O_CLOEXEC)
        defer { FileDescriptor.close(second) }
        #expect(FileLocks.holder(ofFileAt: path) == nil)
        #expect(try FileLocks.tryLockExclusive(first))
        #expect(try !FileLocks.tryLockExclusive(second))
        let holder = try #require(FileLocks.holder(ofFileAt: path))
        #expect(holder.pid == getpid())
        #expect(holder.command == ProcFiles.command(pid: getpid()))
        FileDescriptor.close(first)
        // A process another suite starts meanwhile may hold a copy of the
        // descriptor between its fork and its exec (close-on-exec closes
        // it then): the lock is free once that copy is gone too.
        var taken = false
        for _ in 0..<100 where !taken {
            taken = try FileLocks.tryLockExclusive(second)
            if !taken { usleep(10_000) }
        }
        #expect(taken)
    }
}

/// glibc's `makedev()`, a macro Swift does not import.
private func makedev(_ major: UInt64, _ minor: UInt64) -> dev_t {
    dev_t((minor & 0xff) | ((major & 0xfff) << 8) | ((minor & ~0xff) << 12) | ((major & ~0xfff) << 32))
}
