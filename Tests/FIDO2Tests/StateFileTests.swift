import FIDO2
import Glibc
import SystemKit
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// A virtual key with a state file keeps what it holds across restarts.
@Suite struct StateFileTests {
    let directory = TemporaryDirectory()

    @Test func credentialsAndPINSurviveARestart() throws {
        let path = directory.file("key.state")
        var credential: Credential
        do {
            let key = try makeKey { $0.stateFile = path; $0.initialPIN = "1234" }
            credential = try key.openDevice().makeCredential(registrationRequest(residentKey: true), pin: "1234")
        }
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "the state file holds secrets")

        // The initial PIN is for new keys only: the stored one stands.
        let restarted = try makeKey { $0.stateFile = path; $0.initialPIN = "9999" }
        let device = try restarted.openDevice()
        #expect(device.hasPIN)
        let assertion = try device.getAssertion(assertionRequest(), pin: "1234")
        #expect(assertion.statement(at: 0).credentialID == credential.credentialID)
        try assertion.verify(es256PublicKey: credential.publicKey)
        #expect(assertion.statement(at: 0).signCount > credential.signCount)
        #expect(throws: FIDO2Error.pinInvalid) { try device.getAssertion(assertionRequest(), pin: "9999") }
        #expect(try device.pinRetries() == 7, "spent retries are remembered too")
    }

    @Test func anUnreadableStateFileIsReportedNotReplaced() throws {
        let path = directory.file("broken.state")
        try AtomicFile.write(Array("not a key".utf8), to: path)
        #expect(throws: VirtualKeyError.self) { try makeKey { $0.stateFile = path } }
        #expect(try AtomicFile.read(path) == Array("not a key".utf8))
    }
}
