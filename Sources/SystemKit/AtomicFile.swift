import Glibc

/// Whole-file writes that survive a crash or power loss at any instant: the
/// file holds either its old content or its new content, never a mix.
///
/// The new content goes to a temporary file in the same directory, which is
/// fsync'd, renamed over the target (atomic on POSIX file systems), and then
/// the directory is fsync'd so that the rename itself is durable.
public enum AtomicFile {
    public static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o600) throws(SystemError) {
        let temporary = "\(path).tmp.\(getpid())"
        let fd = try retryingOnInterrupt("open(\(temporary))") {
            open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, permissions)
        }
        do {
            try FileDescriptor.writeAll(fd, bytes)
            try retryingOnInterrupt("fsync(\(temporary))") { fsync(fd) }
        } catch {
            Glibc.close(fd)
            unlink(temporary)
            throw error
        }
        Glibc.close(fd)
        do {
            try retryingOnInterrupt("rename(\(temporary))") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
        try syncDirectory(containing: path)
    }

    /// The file as UTF-8 text; nil when it is missing or cannot be read.
    public static func text(_ path: String) -> String? {
        guard let bytes = try? read(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The file's bytes, or nil when it does not exist.
    public static func read(_ path: String) throws(SystemError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw SystemError("open(\(path))")
        }
        defer { Glibc.close(fd) }
        var content: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = try retryingOnInterrupt("read(\(path))") { Glibc.read(fd, &chunk, chunk.count) }
            if count == 0 { return content }
            content.append(contentsOf: chunk[0..<count])
        }
    }

    static func syncDirectory(containing path: String) throws(SystemError) {
        let directory = FileSystem.directory(containing: path)
        let fd = try retryingOnInterrupt("open(\(directory))") {
            open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        defer { Glibc.close(fd) }
        try retryingOnInterrupt("fsync(\(directory))") { fsync(fd) }
    }
}
