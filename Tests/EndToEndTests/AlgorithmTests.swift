import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// `authctl register --algorithm` against the real daemon. (How the
/// relying party's order and each key's algorithms choose one is tested
/// against the broker in process: AuthDaemonTests.AlgorithmTests.)
@Suite(.timeLimit(.minutes(3))) struct AlgorithmTests {
    /// `authctl register --algorithm`: the summary names the algorithm the
    /// key chose, and a name authctl does not know is a usage error.
    /// (AuthctlCredentialTests has fido2-tools verify its EdDSA output.)
    @Test func authctlRegisterTakesAnAlgorithmAndNamesIt() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=K1"])
        _ = try await daemon.waitForKeys(1)
        let summary = try authctl(daemon, ["register", "--rp", "example.org", "--user", "bob", "--algorithm", "eddsa,es256"])
        #expect(summary.status == 0, "\(summary.standardError)")
        #expect(summary.standardOutput.contains("Algorithm:     eddsa (-8)"), "\(summary.standardOutput)")
        let json = try authctl(daemon, ["register", "--rp", "example.org", "--user", "bob", "--algorithm", "rs256,es256", "--json"])
        #expect(try json.json()["registration"]?["publicKeyAlgorithm"] == -7, "the key has no RS256: ES256, the next one")
        let wrong = try authctl(daemon, ["register", "--rp", "example.org", "--user", "bob", "--algorithm", "ed448"])
        #expect(wrong.status == 64 && wrong.standardError.contains("--algorithm takes"), "\(wrong.standardError)")
        let twice = try authctl(daemon, ["register", "--rp", "example.org", "--user", "bob", "--algorithm", "eddsa,eddsa"])
        #expect(twice.status == 64, "\(twice.standardError)")
    }
}
