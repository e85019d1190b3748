import FuzzTargets
import Glibc

/// A temporary file that an exit test's child process writes its standard
/// error into. `#expect(processExitsWith:)` returns the child's output only
/// when the child passes, and the output of one that crashed is what says
/// which input it was running and why it stopped.
struct ChildLog: Sendable {
    let path: String

    init() {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/authkeyd-fuzz-replay-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if descriptor >= 0 { close(descriptor) }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// In the child: standard error from now on goes to the file at `path`.
    static func redirectStandardError(to path: String) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        dup2(descriptor, STDERR_FILENO)
        close(descriptor)
    }

    /// In the child: one line, unbuffered, so that it is in the file
    /// however the process ends.
    static func note(_ line: String) {
        let bytes = Array("\(line)\n".utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    var lines: [Substring] {
        String(decoding: readInput(path) ?? [], as: UTF8.self).split(separator: "\n")
    }

    func remove() { unlink(path) }
}
