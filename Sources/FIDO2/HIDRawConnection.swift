import Glibc
import HIDReports
import Synchronization
import SystemKit

/// A USB key's hidraw node, driven through libfido2's custom I/O as every
/// other key is.
///
/// libfido2's own hidraw code takes the node's `flock` by retrying for
/// about twenty seconds inside `fido_dev_open` (1.12, `fido_hid_open`),
/// with no way to hear why it waits or to stop it. Opened here, a node
/// another program holds fails at once with `FIDO2Error.keyLocked`, and
/// the caller decides how long to wait and whom to tell. The lock is the
/// same one libfido2 takes, so programs that open the key through libfido2
/// themselves (fido2-token, OpenSSH, pam_u2f) wait for ours as for each
/// other's.
public final class HIDRawConnection: HIDReportConnection {
    private let fd: Int32
    private let closed = Atomic<Bool>(false)

    /// Opens and locks the node. Throws `keyLocked` when another program
    /// holds its lock, `internalError` (as libfido2 answers a node it
    /// cannot open) for anything else.
    public init(path: String) throws(FIDO2Error) {
        let fd: Int32
        do {
            fd = try FileDescriptor.open(path, O_RDWR | O_CLOEXEC)
        } catch {
            throw FIDO2Error(code: FIDO2Error.internalError.code, function: "open \(path): \(error)")
        }
        let locked: Bool
        do {
            locked = try FileLocks.tryLockExclusive(fd)
        } catch {
            FileDescriptor.close(fd)
            throw FIDO2Error(code: FIDO2Error.internalError.code, function: "flock \(path): \(error)")
        }
        guard locked else {
            FileDescriptor.close(fd)
            throw FIDO2Error(code: FIDO2Error.keyLocked.code, function: path)
        }
        self.fd = fd
    }

    deinit { close() }

    /// A report goes out as hidraw takes it: report ID 0, then the 64 bytes.
    public func send(report: [UInt8]) -> Bool {
        guard report.count == hidReportSize, !closed.load(ordering: .acquiring) else { return false }
        let message = [0] + report
        let written = try? message.withUnsafeBytes { (bytes) throws(SystemError) in try FileDescriptor.write(fd, bytes) }
        return written == message.count
    }

    /// A FIDO key's reports carry no report ID: each read is one 64-byte report.
    public func receive(timeoutMilliseconds: Int) -> [UInt8]? {
        guard !closed.load(ordering: .acquiring),
            (try? waitUntilReadable(fd, timeoutMilliseconds: timeoutMilliseconds)) == true
        else { return nil }
        var report = [UInt8](repeating: 0, count: hidReportSize)
        let count = try? report.withUnsafeMutableBytes { (buffer) throws(SystemError) in try FileDescriptor.read(fd, into: buffer) }
        return count == hidReportSize ? report : nil
    }

    /// Closing the node releases its lock.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        FileDescriptor.close(fd)
    }
}
