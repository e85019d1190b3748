import Glibc

/// A directory watched through inotify, as a descriptor that turns
/// readable when an event comes (for a Dispatch read source).
public enum DirectoryWatch {
    /// A non-blocking, close-on-exec inotify descriptor watching `directory`
    /// for `events` (`IN_CREATE`, …); the caller closes it.
    public static func open(_ directory: String, events: UInt32) throws(SystemError) -> Int32 {
        let fd = try retryingOnInterrupt("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        do {
            try retryingOnInterrupt("inotify_add_watch(\(directory))") { inotify_add_watch(fd, directory, events) }
        } catch {
            FileDescriptor.close(fd)
            throw error
        }
        return fd
    }
}
