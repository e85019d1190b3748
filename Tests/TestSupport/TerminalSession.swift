import Foundation
import SystemKit

/// A command on a pseudo-terminal of its own (util-linux `script`), driven
/// as a person drives it: wait for each question, then type the answer.
public final class TerminalSession {
    private let process = Process()
    private let keyboard = Pipe()
    private let screen = Pipe()
    private var shown: [UInt8] = []
    /// Where the next `waitFor` starts looking, so a question asked twice is waited for twice.
    private var cursor = 0

    public init(_ command: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        process.arguments = ["--quiet", "--return", "--command", quoted, "/dev/null"]
        process.standardInput = keyboard
        process.standardOutput = screen
        process.standardError = screen
        try process.run()
        ChildReaper.watch(process.processIdentifier)
    }

    deinit { if process.isRunning { process.terminate() } }

    /// Whether `text` shows on the terminal within the timeout.
    public func waitFor(_ text: String, timeout: Duration = .seconds(10)) -> Bool {
        let wanted = Array(text.utf8)
        let fd = screen.fileHandleForReading.fileDescriptor
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = range(of: wanted, from: cursor) {
                cursor = found
                return true
            }
            let remaining = (deadline - ContinuousClock.now).wholeMilliseconds
            guard remaining > 0, (try? waitUntilReadable(fd, timeoutMilliseconds: remaining)) == true else { return false }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { return false }
            shown += buffer.prefix(count)
        }
    }

    public func type(_ text: String, newline: Bool = true) {
        keyboard.fileHandleForWriting.write(Data((newline ? text + "\n" : text).utf8))
    }

    /// Waits for the command to end: its exit status and all it showed.
    public func finish() -> (status: Int32, transcript: String) {
        shown += screen.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: shown, as: UTF8.self))
    }

    /// The end of the first `wanted` in what was shown from `start` on.
    private func range(of wanted: [UInt8], from start: Int) -> Int? {
        guard shown.count - start >= wanted.count else { return nil }
        for index in start...(shown.count - wanted.count) where shown[index..<index + wanted.count].elementsEqual(wanted) {
            return index + wanted.count
        }
        return nil
    }
}
