import Glibc
import SystemKit

/// The daemon's own socket file: made when no other daemon serves it, a
/// stale one replaced, with the owner and mode the policy calls for.
enum SocketFile {
    /// Binds and listens at `path`; every step's failure is a start-up
    /// error but the group's ownership, which is logged (the socket then
    /// stays the owner's only, the safe side).
    static func bind(at path: String, mode: mode_t, group: gid_t?, logger: Logger) throws(ConfigurationError) -> Int32 {
        if UnixSocket.isListening(path: path, kind: .stream) {
            throw ConfigurationError("another authkeyd is already serving \(path)")
        }
        let directory = FileSystem.parent(of: path)
        let fd: Int32
        do {
            if !directory.isEmpty && !FileSystem.exists(directory) {
                try FileSystem.makeDirectory(directory, mode: 0o755)
            }
            try FileSystem.removeFile(path)
            // Created with no access for anyone, opened up once its owner is right.
            fd = try FileSystem.withCreationMask(0o777) { () throws(SystemError) -> Int32 in
                try UnixSocket.listen(path: path, kind: .stream, backlog: 1024)
            }
        } catch {
            throw ConfigurationError("cannot serve \(path): \(error)")
        }
        if let group {
            do { try FileSystem.setOwner(path, user: geteuid(), group: group) } catch {
                logger.warning("cannot give \(path) to group \(group): \(error)")
            }
        }
        do { try FileSystem.setMode(path, mode) } catch {
            FileDescriptor.close(fd)
            do { try FileSystem.removeFile(path) } catch { logger.warning("cannot remove \(path) again: \(error)") }
            throw ConfigurationError("cannot open \(path) to its clients: \(error)")
        }
        return fd
    }
}
