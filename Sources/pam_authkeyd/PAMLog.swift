import CPAM
import Glibc
import PAMAuthkeyd
import SystemKit

/// The module's log: syslog through libpam (`pam_syslog`'s va_list form,
/// which names the service and the module), and `debug_file=` where given:
/// a file that must exist already, opened for appending, never through a
/// link. Nothing is written to the application's own descriptors.
final class PAMLog: ModuleLog, @unchecked Sendable {
    private let handle: Int
    private let isDebugging: Bool
    private let file: Int32?
    private let lock = Lock()

    init(handle: OpaquePointer, debug: Bool, file path: String?) {
        self.handle = Int(bitPattern: UnsafeRawPointer(handle))
        isDebugging = debug
        file = path.flatMap { try? FileDescriptor.open($0, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK) }
            .flatMap { fd in
                guard let status = try? FileDescriptor.status(fd), status.st_mode & S_IFMT == S_IFREG else {
                    FileDescriptor.close(fd)
                    return nil
                }
                return fd
            }
    }

    func debug(_ line: String) {
        guard isDebugging else { return }
        write(LOG_DEBUG, line)
    }

    func error(_ line: String) {
        write(LOG_ERR, line)
    }

    func close() {
        if let file { FileDescriptor.close(file) }
    }

    private func write(_ priority: Int32, _ line: String) {
        lock.withLock {
            if let pointer = UnsafeRawPointer(bitPattern: handle) {
                line.withCString { text in
                    withVaList([text]) { arguments in pam_vsyslog(OpaquePointer(pointer), priority, "%s", arguments) }
                }
            }
            if let file { _ = try? FileDescriptor.writeAll(file, Array("pam_authkeyd: \(line)\n".utf8)) }
        }
    }
}
