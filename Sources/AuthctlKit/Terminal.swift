import Glibc
import SystemKit

/// The controlling terminal, /dev/tty: prompts are asked and answered
/// there even when standard input and output are pipes (`--json | jq`).
/// authctl is interactive exactly when it can open it.
final class Terminal: Sendable {
    private let fd: Int32
    /// One question at a time, even if two prompts arrive together.
    private let conversation = Lock()
    /// Written to by `abandonQuestion`: the question being asked gives up
    /// waiting for its line (the agent's request was cancelled).
    private let wake: (reading: Int32, writing: Int32)?

    private init(fd: Int32) {
        self.fd = fd
        wake = try? FileDescriptor.pipe()
    }

    deinit {
        FileDescriptor.close(fd)
        if let wake {
            FileDescriptor.close(wake.reading)
            FileDescriptor.close(wake.writing)
        }
    }

    /// The terminal at `path` (`/dev/tty`, the controlling one); nil
    /// without one (a service, `setsid`, ssh without -t).
    static func open(_ path: String) -> Terminal? {
        // ENXIO (no controlling terminal) is the usual failure; any other
        // leaves authctl just as unable to ask.
        guard let fd = try? FileDescriptor.open(path, O_RDWR | O_CLOEXEC | O_NOCTTY) else { return nil }
        return Terminal(fd: fd)
    }

    /// Shows `question` and returns the line typed; nil at Ctrl-D.
    func ask(_ question: String) -> String? {
        conversation.withLock {
            write(question)
            return readAnswer().map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Like `ask`, with echo off: for a PIN. Echo goes off before the
    /// question shows, so that nothing typed after it is echoed (or flushed).
    func askSecret(_ question: String) -> String? {
        conversation.withLock {
            let typed = withEchoOff(fd) { () -> String? in
                write(question)
                guard var bytes = readAnswer() else { return nil }
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

    /// Makes the question being asked return nil, as Ctrl-D does: its
    /// answer is no longer wanted. Safe from any thread; a question asked
    /// later is not affected.
    func abandonQuestion() {
        guard let wake else { return }
        var byte: UInt8 = 1
        _ = withUnsafeBytes(of: &byte) { try? FileDescriptor.write(wake.writing, $0) }
    }

    /// The line typed, once the terminal has one (it is in canonical mode:
    /// readable means a whole line waits), or nil at Ctrl-D or when
    /// `abandonQuestion` is called meanwhile.
    private func readAnswer() -> [UInt8]? {
        guard let wake else { return readLine(from: fd) }
        drain(wake.reading)
        var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.reading, events: Int16(POLLIN), revents: 0)]
        while true {
            guard (try? waitForEvents(&descriptors, timeoutMilliseconds: -1)) != nil else { return nil }
            if descriptors[1].revents != 0 {
                drain(wake.reading)
                write("\n")
                return nil
            }
            if descriptors[0].revents != 0 { return readLine(from: fd) }
        }
    }

    /// Empties the wake pipe, without waiting: an abandonment meant for an
    /// earlier question must not end this one.
    private func drain(_ pipe: Int32) {
        var scratch = [UInt8](repeating: 0, count: 64)
        var descriptors = [pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)]
        while (try? waitForEvents(&descriptors, timeoutMilliseconds: 0)) ?? 0 > 0 {
            guard let count = try? scratch.withUnsafeMutableBytes({ try FileDescriptor.read(pipe, into: $0) }), count > 0 else { return }
        }
    }

    /// Text shown at once, even while a question waits for its line (the
    /// agent's news of other requests): it may land after the question.
    func announce(_ text: String) { write(text) }

    /// Text shown without waiting for an answer.
    func say(_ text: String) {
        conversation.withLock { write(text) }
    }

    private func write(_ text: String) {
        // A terminal that takes no more output has no one left to tell.
        try? FileDescriptor.writeAll(fd, Array(text.utf8))
    }
}
