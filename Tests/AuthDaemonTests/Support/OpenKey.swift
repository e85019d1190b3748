import AuthClient
@testable import AuthDaemon
import AuthProtocol
import FIDO2
import VirtualKey
import VirtualKeyDevice

/// What the tests moved from EndToEndTests asked of the daemon process,
/// asked of the broker in process instead.
extension InProcessBroker {
    /// The keys the broker lists (`authenticators.list`). `init` returns
    /// once every virtual key is in service: unlike a daemon process's,
    /// there is nothing to wait for.
    func listKeys() async throws -> [Authenticator] {
        let client = try client()
        defer { client.close() }
        return try await client.listAuthenticators()
    }

    /// Shuts the broker down as authkeyd does at SIGTERM: the keys let go
    /// and their state files are final, so a test may open them itself.
    func stop() async { await broker.shutDown() }
}

/// Opens a virtual key's state file in this process, through libfido2:
/// what a call left on a key, read from the key and not the broker's word.
func openKey(state path: String) throws -> Device {
    try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "state=\(path)")).openDevice()
}
