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
        let broken = CredentialJSON.attestation(format: "packed", statement: [0xA1, 0x63], conveyance: "direct", logger: log.logger)
        #expect(broken.format == "none" && broken.statement == .map([:]) && broken.anonymous)
        #expect(log.text.contains("attestation statement (format packed, 2 bytes) cannot be decoded"), "\(log.text)")

        let sound = CBOR.map(["alg": .int(-7), "sig": .bytes([1, 2, 3])])
        let kept = CredentialJSON.attestation(format: "packed", statement: sound.encoded(), conveyance: "direct", logger: log.logger)
        #expect(kept.format == "packed" && kept.statement == sound && !kept.anonymous)
        let asked = CredentialJSON.attestation(format: "packed", statement: sound.encoded(), conveyance: "none", logger: log.logger)
        #expect(asked.format == "none" && asked.anonymous)
        #expect(!log.text.contains("\n"), "only the broken statement is logged: \(log.text)")
    }
}
