import PAMAuthFile
import CPAM
import Glibc
import PAMAuthkeyd
import SystemKit

/// Reads an authfile as pam_u2f does, with the checks it makes: a
/// regular file, owned by the user or by root; opened with the user's
/// privileges where asked (libpam's `pam_modutil_drop_priv`, which
/// changes this thread's filesystem ids and groups and nothing else, and
/// puts them back at once after the open), so that root does not read
/// for a user what the user cannot read.
struct AuthFileReader {
    let handle: OpaquePointer
    let account: UserAccount

    /// The file's contents; nil when there is no file.
    func read(_ path: String, asUser: Bool) -> Result<[UInt8]?, AuthFileError> {
        let opened = asUser ? openAsUser(path) : open(path)
        let fd: Int32
        switch opened {
        case .success(let descriptor?): fd = descriptor
        case .success(nil): return .success(nil)
        case .failure(let error): return .failure(error)
        }
        defer { FileDescriptor.close(fd) }
        guard let status = try? FileDescriptor.status(fd) else { return .failure(AuthFileError("cannot read its status")) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(AuthFileError("it is not a regular file")) }
        guard status.st_uid == account.uid || status.st_uid == 0 else {
            return .failure(AuthFileError("it belongs to uid \(status.st_uid), neither \(account.name) nor root"))
        }
        guard Int(status.st_size) <= AuthFile.maximumSize else {
            return .failure(AuthFileError("it is \(status.st_size) bytes, more than the \(AuthFile.maximumSize) an authfile may have"))
        }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while contents.count <= AuthFile.maximumSize {
            let count: Int?
            do {
                count = try chunk.withUnsafeMutableBytes { buffer throws(SystemError) in try FileDescriptor.read(fd, into: buffer) }
            } catch {
                return .failure(AuthFileError("reading it: \(error)"))
            }
            guard let count, count > 0 else { break }
            contents += chunk[..<count]
        }
        return .success(contents)
    }

    private func open(_ path: String) -> Result<Int32?, AuthFileError> {
        do {
            // Non-blocking: a FIFO put in the file's place does not hang sudo.
            return .success(try FileDescriptor.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
        } catch where error.code == ENOENT || error.code == ENOTDIR {
            return .success(nil)
        } catch {
            return .failure(AuthFileError("cannot open it: \(error)"))
        }
    }

    private func openAsUser(_ path: String) -> Result<Int32?, AuthFileError> {
        let privileges = UnsafeMutablePointer<authkeyd_pam_privs>.allocate(capacity: 1)
        defer { privileges.deallocate() }
        authkeyd_pam_privs_init(privileges)
        guard pam_modutil_drop_priv(handle, &privileges.pointee.privs, account.entry) == 0 else {
            return .failure(AuthFileError("cannot take \(account.name)'s privileges to read it"))
        }
        let opened = open(path)
        guard pam_modutil_regain_priv(handle, &privileges.pointee.privs) == 0 else {
            if case .success(let fd?) = opened { FileDescriptor.close(fd) }
            return .failure(AuthFileError("cannot return to root's privileges after reading it as \(account.name)"))
        }
        return opened
    }
}
