import Glibc
import SystemKit

/// PINs read from an inherited file descriptor (`--pin-fd N`), one a line,
/// so that a PIN never appears in argv, the environment or `ps`. Each PIN
/// prompt takes the next line; when the lines run out, the prompt is
/// cancelled rather than asked at the terminal, so a script that gave a
/// wrong PIN fails instead of hanging.
final class PINFile: Sendable {
    private let fd: Int32
    private let exhausted = Protected(false)

    /// Refuses a number that is not an open descriptor, before connecting.
    init(_ text: String) throws(UsageError) {
        guard let fd = Int32(text), fd >= 0, (try? FileDescriptor.status(fd)) != nil else {
            throw UsageError("--pin-fd \(text): not an open file descriptor")
        }
        self.fd = fd
    }

    /// The next PIN; nil when there is none.
    func next() -> String? {
        exhausted.withLock { exhausted -> String? in
            guard !exhausted, var bytes = readLine(from: fd) else {
                exhausted = true
                return nil
            }
            defer { wipe(&bytes) }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }
}
