import Glibc
import SystemKit

/// The controlling terminal, /dev/tty: prompts are asked and answered
/// there even when standard input and output are pipes (`--json | jq`).
/// authctl is interactive exactly when it can open it.
final class Terminal: Sendable {
    private let fd: Int32
    /// One question at a time, even if two prompts arrive together.
    private let conversation = Lock()

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// nil without a controlling terminal (a service, `setsid`, ssh without -t).
    static func open() -> Terminal? {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        return fd >= 0 ? Terminal(fd: fd) : nil
    }

    /// Shows `question` and returns the line typed; nil at Ctrl-D.
    func ask(_ question: String) -> String? {
        conversation.withLock {
            write(question)
            return readLine(from: fd).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Like `ask`, with echo off: for a PIN. Echo goes off before the
    /// question shows, so that nothing typed after it is echoed (or flushed).
    func askSecret(_ question: String) -> String? {
        conversation.withLock {
            let typed = withEchoOff(fd) { () -> String? in
                write(question)
                guard var bytes = readLine(from: fd) else { return nil }
                defer { wipe(&bytes) }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard let typed else {
                write("authctl: cannot turn off echo on this terminal, so it will not read a PIN here.\n")
                return nil
            }
            return typed
        }
    }

    /// Text shown without waiting for an answer.
    func say(_ text: String) {
        conversation.withLock { write(text) }
    }

    private func write(_ text: String) {
        // A terminal that has gone takes no more text; the answer read next fails instead.
        try? writeAll(fd, Array(text.utf8))
    }
}
