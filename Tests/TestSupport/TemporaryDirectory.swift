import Glibc
import SystemKit

/// A fresh directory under /tmp, removed with everything in it when the
/// value goes away. Short paths: Unix socket paths are limited to 107 bytes.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(prefix: String = "authkeyd-test") {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: \(errno)") }
        path = String(cString: made)
    }

    deinit {
        removeTree(path)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }
}

private func removeTree(_ path: String) {
    guard let names = directoryNames(path) else {
        unlink(path)
        return
    }
    for name in names {
        let child = "\(path)/\(name)"
        var info = stat()
        if lstat(child, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            removeTree(child)
        } else {
            unlink(child)
        }
    }
    rmdir(path)
}
