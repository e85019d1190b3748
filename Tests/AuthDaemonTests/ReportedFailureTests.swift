import AuthProtocol
import BrokerTestSupport
@testable import AuthDaemon
import CBOR
import TestSupport
import Testing

/// Results that were once dropped without a word, now reported.
@Suite struct ReportedFailureTests {
    /// An attestation statement the daemon cannot decode is logged, and
    /// the registration carries an honest `none` (AAGUID zeroed), not the
    /// key's format with an empty statement that no relying party verifies.
    @Test func anUndecodableAttestationStatementIsLoggedAndConveyedAsNone() {
        let log = LogRecord()
        let broken = CredentialJSON.attestation(format: "packed", statement: [0xA1, 0x63], conveyance: .direct, logger: log.logger)
        #expect(broken.format == "none" && broken.statement == .map([:]) && broken.anonymous)
        #expect(log.text.contains("attestation statement (format packed, 2 bytes) cannot be decoded"), "\(log.text)")

        let sound = CBOR.map(["alg": .int(-7), "sig": .bytes([1, 2, 3])])
        let kept = CredentialJSON.attestation(format: "packed", statement: sound.encoded(), conveyance: .direct, logger: log.logger)
        #expect(kept.format == "packed" && kept.statement == sound && !kept.anonymous)
        let asked = CredentialJSON.attestation(format: "packed", statement: sound.encoded(), conveyance: AttestationConveyance.none, logger: log.logger)
        #expect(asked.format == "none" && asked.anonymous)
        #expect(!log.text.contains("\n"), "only the broken statement is logged: \(log.text)")
    }

    /// A `READY=1` that cannot reach the service manager is logged with
    /// what its loss means.
    @Test func aLostReadyNotificationIsLogged() {
        let log = LogRecord()
        let missing = TemporaryDirectory(prefix: "authkeyd-notify").file("no-such-socket")
        Systemd.notify("READY=1\nSTATUS=Serving", environment: ["NOTIFY_SOCKET": missing], logger: log.logger)
        #expect(log.text.contains("cannot send READY=1 to the service manager (NOTIFY_SOCKET=\(missing))"), "\(log.text)")
        #expect(log.text.contains("fails the start or reload at its timeout"), "\(log.text)")
    }
}
