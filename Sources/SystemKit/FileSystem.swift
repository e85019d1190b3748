import Glibc

/// The file-system calls the daemon and its tools make, each returning or
/// throwing its result so that no failure is dropped unseen.
///
/// The cases callers expect (a directory that already exists, a file that
/// is already gone) are not failures and do not throw.
public enum FileSystem {
    /// Whether anything exists at `path` (following symbolic links).
    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Whether `path` is a regular file (following symbolic links).
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// The directory part of `path`: "" for a bare name, "/" for a file at the root.
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The directory a path's file is in, as a path to open: "." for a bare
    /// name, "/" for a file at the root.
    public static func directory(containing path: String) -> String {
        let parent = parent(of: path)
        return parent.isEmpty ? "." : parent
    }

    /// Creates the directory with `mode` (less the umask), and with
    /// `intermediates` every missing parent too, each with the same mode.
    /// A directory that already exists is left as it is.
    public static func makeDirectory(_ path: String, mode: mode_t, intermediates: Bool = false) throws(SystemError) {
        if intermediates {
            let parent = parent(of: path)
            if !parent.isEmpty && parent != "/" && !exists(parent) {
                try makeDirectory(parent, mode: mode, intermediates: true)
            }
        }
        if mkdir(path, mode) != 0 && errno != EEXIST { throw SystemError("mkdir(\(path))") }
    }

    /// Removes the file (or socket, or link); one that is already gone is not an error.
    public static func removeFile(_ path: String) throws(SystemError) {
        if unlink(path) != 0 && errno != ENOENT { throw SystemError("unlink(\(path))") }
    }

    /// Renames `path` to `newPath` (replacing a file there, atomically).
    public static func rename(_ path: String, to newPath: String) throws(SystemError) {
        try retryingOnInterrupt("rename(\(path))") { Glibc.rename(path, newPath) }
    }

    public static func setMode(_ path: String, _ mode: mode_t) throws(SystemError) {
        try retryingOnInterrupt("chmod(\(path))") { chmod(path, mode) }
    }

    public static func setOwner(_ path: String, user: uid_t, group: gid_t) throws(SystemError) {
        try retryingOnInterrupt("chown(\(path))") { chown(path, user, group) }
    }

    /// Runs `body` with the process's file-creation mask set to `mask`, then
    /// restores it. The mask is process-wide: call this only where no other
    /// thread creates files at the same time (the daemon's start-up).
    public static func withCreationMask<R, E: Error>(_ mask: mode_t, _ body: () throws(E) -> R) throws(E) -> R {
        let previous = umask(mask)
        defer { umask(previous) }
        return try body()
    }
}
