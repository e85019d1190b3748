import Glibc
import SystemKit

/// A software TPM 2.0 (Debian's swtpm) on a Unix socket, its state in a
/// directory of its own: started again on the same directory it is the
/// same TPM (the same seeds, so the same storage primary); on another
/// directory, another TPM. One per suite; see Tests/README.md.
public final class SoftwareTPM: @unchecked Sendable {
    public let state: TemporaryDirectory
    private var process: ChildProcess?

    /// The TCTI string tpm2-tss reaches it by.
    public var tcti: String { "swtpm:path=\(socket)" }
    private var socket: String { state.file("socket") }

    /// How long swtpm has to make its socket (it takes about 30 ms).
    static let startLimit: Duration = .seconds(10)

    public init(state: TemporaryDirectory = TemporaryDirectory(prefix: "authkeyd-tpm")) throws {
        self.state = state
        try start()
    }

    deinit { stop() }

    /// Starts swtpm on the state directory, manufactured on the first
    /// start (`startup-clear`: no TPM2_Startup needed from the tests).
    public func start() throws {
        guard process == nil else { return }
        unlink(socket)
        let child = try ChildProcess(
            "swtpm",
            ["socket", "--tpm2", "--tpmstate", "dir=\(state.path)", "--server", "type=unixio,path=\(socket)",
             "--ctrl", "type=unixio,path=\(state.file("socket.ctrl"))", "--flags", "not-need-init,startup-clear"],
            standardError: .null)
        process = child
        let deadline = ContinuousClock.now + Self.startLimit
        // Listening, not only there: swtpm binds the socket before it
        // listens, and a busy machine may show the file in between.
        while !UnixSocket.isListening(path: socket, kind: .stream) {
            guard ContinuousClock.now < deadline else {
                stop()
                throw SoftwareTPMError("swtpm did not make \(socket) within \(Self.startLimit); is swtpm installed (scripts/install-deps)?")
            }
            usleep(5_000)
        }
    }

    /// Stops swtpm; its state stays in the directory.
    public func stop() {
        guard let child = process else { return }
        child.terminate()
        child.wait()
        process = nil
    }
}

public struct SoftwareTPMError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
