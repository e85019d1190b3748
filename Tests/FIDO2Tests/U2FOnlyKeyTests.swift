import CBOR
import Crypto
import FIDO2
import Foundation
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// A U2F-only key (the virtual key's `ctap=u2f` personality) as libfido2
/// drives it: its U2F path (REGISTER and AUTHENTICATE APDUs in
/// CTAPHID_MSG), with this module's FIDO_DISABLE_U2F_FALLBACK in force.
/// What comes back is checked by libfido2's own verifiers and by
/// Debian's `fido2-cred -V` / `fido2-assert -V`.
@Suite struct U2FOnlyKeyTests {
    let directory = TemporaryDirectory()

    func u2fKey(_ configure: (inout VirtualKeyConfiguration) -> Void = { _ in }) throws -> VirtualKey {
        try makeKey {
            $0.ctap = .u2f
            configure(&$0)
        }
    }

    @Test func libfido2OpensItAsAU2FDeviceAndTheDaemonsInfoSaysSo() throws {
        let device = try u2fKey().openDevice()
        #expect(!device.isFIDO2)
        #expect(device.hidVersion.capabilities == 0x01, "wink only: no CBOR, and NMSG clear")
        #expect(!device.supportsPIN && !device.supportsUV && !device.supportsCredentialManagement)
        let info = try device.infoOrU2FProfile()
        #expect(info.versions == ["U2F_V2"] && info.isU2FOnly)
        #expect(info.algorithms == [.init(type: "public-key", cose: -7)])
        #expect(info.options.isEmpty && info.extensions.isEmpty)
        // getInfo itself has nothing to answer it.
        #expect(throws: FIDO2Error.self) { try device.info() }
        // A CTAP2 key is not mistaken for one.
        #expect(try makeKey().openDevice().infoOrU2FProfile().isU2FOnly == false)
    }

    @Test func registersAFidoU2FCredentialThatLibfido2Verifies() throws {
        let device = try u2fKey().openDevice()
        let request = registrationRequest()
        let credential = try device.makeCredential(request)
        #expect(credential.format == "fido-u2f")
        try credential.verify()
        #expect(credential.flags.contains([.userPresent, .attestedCredentialData]))
        #expect(!credential.flags.contains(.userVerified))
        #expect(credential.aaguid == [UInt8](repeating: 0, count: 16))
        #expect(credential.credentialID.count == 64)
        #expect(credential.publicKey.count == 64)
        let certificate = try CertificateSummary(der: credential.attestationCertificate)
        #expect(certificate.subject.contains("OU=Authenticator Attestation"))

        // A changed client data hash no longer verifies.
        let forged = try Credential.forVerification(
            request: registrationRequest(), format: "fido-u2f", authenticatorData: credential.authenticatorData,
            attestationCertificate: credential.attestationCertificate, signature: credential.attestationSignature)
        #expect(throws: FIDO2Error.self) { try forged.verify() }
    }

    @Test func authenticatesWithAnAllowListAndTheCounterGrows() throws {
        let device = try u2fKey().openDevice()
        let credential = try device.makeCredential(registrationRequest())
        var counts: [UInt32] = []
        for _ in 0..<2 {
            // An unknown handle first: libfido2 skips it (check-only: 0x6A80).
            let assertion = try device.getAssertion(
                assertionRequest(allow: [secureRandomBytes(64), credential.credentialID]))
            #expect(assertion.count == 1)
            try assertion.verify(es256PublicKey: credential.publicKey)
            let statement = assertion.statement(at: 0)
            #expect(statement.credentialID == credential.credentialID)
            #expect(statement.flags.contains(.userPresent) && !statement.flags.contains(.userVerified))
            counts.append(statement.signCount)
        }
        #expect(counts[1] == counts[0] + 1 && counts[0] >= 1)
    }

    @Test func requestsU2FCannotServeFailInLibfido2() throws {
        let device = try u2fKey().openDevice()
        let credential = try device.makeCredential(registrationRequest())
        #expect(throws: FIDO2Error.unsupportedOption) { try device.makeCredential(registrationRequest(residentKey: true)) }
        var verified = registrationRequest()
        verified.userVerification = .enabled
        #expect(throws: FIDO2Error.unsupportedOption) { try device.makeCredential(verified) }
        var withExtension = registrationRequest()
        withExtension.hmacSecret = true
        #expect(throws: FIDO2Error.unsupportedOption) { try device.makeCredential(withExtension) }
        #expect(throws: FIDO2Error.unsupportedOption) { try device.getAssertion(assertionRequest()) }
        var uv = assertionRequest(allow: [credential.credentialID])
        uv.userVerification = .enabled
        #expect(throws: FIDO2Error.unsupportedOption) { try device.getAssertion(uv) }
        #expect(throws: FIDO2Error.unsupportedOption) {
            try device.getAssertion(assertionRequest(allow: [credential.credentialID]), pin: PIN("1234"))
        }
        // Someone else's handle, or this key's for another site: nothing to sign with.
        #expect(throws: FIDO2Error.noCredentials) { try device.getAssertion(assertionRequest(allow: [secureRandomBytes(64)])) }
        #expect(throws: FIDO2Error.noCredentials) {
            try device.getAssertion(assertionRequest(rpID: "other.example", allow: [credential.credentialID]))
        }
        // A silent probe finds the handle but cannot sign without a touch.
        var probe = assertionRequest(allow: [credential.credentialID])
        probe.userPresence = .disabled
        #expect(throws: FIDO2Error.userPresenceRequired) { try device.getAssertion(probe) }
    }

    @Test func theExcludeListIsHonouredAfterATouch() throws {
        let device = try u2fKey().openDevice()
        let credential = try device.makeCredential(registrationRequest())
        var again = registrationRequest()
        again.excludeList = [credential.credentialID]
        #expect(throws: FIDO2Error.credentialExcluded) { try device.makeCredential(again) }
        again.excludeList = [secureRandomBytes(64)]
        #expect(try device.makeCredential(again).format == "fido-u2f")
    }

    @Test func libfido2PollsUntilTheSimulatedUserTouches() throws {
        let device = try u2fKey { $0.presence = .after(.milliseconds(400)) }.openDevice()
        let clock = ContinuousClock()
        let started = clock.now
        let credential = try device.makeCredential(registrationRequest())
        #expect(clock.now - started >= .milliseconds(400))
        let signing = clock.now
        try device.getAssertion(assertionRequest(allow: [credential.credentialID])).verify(es256PublicKey: credential.publicKey)
        #expect(clock.now - signing >= .milliseconds(400))

        // Nobody touches: libfido2 gives up when its time is over.
        let untouched = try u2fKey { $0.presence = .never }.openDevice(timeout: .milliseconds(700))
        let waiting = clock.now
        #expect(throws: FIDO2Error.self) { try untouched.makeCredential(registrationRequest()) }
        #expect(clock.now - waiting >= .milliseconds(600))
    }

    @Test func theCounterAndTheCredentialsOutliveARestartAndAreTheCTAP2Keys() throws {
        let state = directory.file("u2f-state")
        let first = try u2fKey { $0.stateFile = state }.openDevice()
        let credential = try first.makeCredential(registrationRequest())
        let before = try first.getAssertion(assertionRequest(allow: [credential.credentialID])).statement(at: 0).signCount

        let restarted = try u2fKey { $0.stateFile = state }.openDevice()
        let after = try restarted.getAssertion(assertionRequest(allow: [credential.credentialID]))
        try after.verify(es256PublicKey: credential.publicKey)
        #expect(after.statement(at: 0).signCount == before + 1)

        // The same flash, spoken to as CTAP2: the U2F key handle is a credential id it knows.
        let asCTAP2 = try makeKey { $0.stateFile = state }.openDevice()
        let ctap2 = try asCTAP2.getAssertion(assertionRequest(allow: [credential.credentialID]))
        try ctap2.verify(es256PublicKey: credential.publicKey)
        #expect(ctap2.statement(at: 0).signCount == before + 2)
    }

    @Test func injectedFaultsHitU2FRepliesToo() throws {
        // The first reply (to REGISTER) garbled: its reserved byte is not 0x05.
        let device = try u2fKey { $0.fault = .corruptReport(index: 0) }.openDevice()
        #expect(throws: FIDO2Error.rx) { try device.makeCredential(registrationRequest()) }
        let credential = try device.makeCredential(registrationRequest())
        try credential.verify()
    }

    @Test func aU2FKeyTakesNoPIN() throws {
        #expect(throws: VirtualKeyError.self) { try u2fKey { $0.initialPIN = "123456" } }
        #expect(throws: VirtualKeyError.self) { try VirtualKeyConfiguration(spec: "ctap=u2f2") }
        #expect(try VirtualKeyConfiguration(spec: "ctap=u2f").ctap == .u2f)
        #expect(try VirtualKeyConfiguration(spec: "").ctap == .fido2)
    }

    // MARK: fido2-tools

    @Test func fido2CredAndFido2AssertAcceptTheU2FOutputs() throws {
        try #require(isInstalled("fido2-cred") && isInstalled("fido2-assert"), "needs Debian's fido2-tools")
        try verifyWithTools(try u2fKey().openDevice())
    }

    @Test func overTheSocketFrontEndOfAuthkeydVirtkey() throws {
        try #require(isInstalled("fido2-cred") && isInstalled("fido2-assert"), "needs Debian's fido2-tools")
        let socket = directory.file("u2f.sock")
        let server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", socket, "--ctap", "u2f", "--name", "U2F Key"])
        defer { server.stop() }
        #expect(waitUntil { access(socket, F_OK) == 0 })
        let device = try Device.open(connection: try SocketConnection(path: socket), timeout: .seconds(10))
        #expect(!device.isFIDO2)
        try verifyWithTools(device)
    }

    /// Registers and authenticates, then has `fido2-cred -V` and
    /// `fido2-assert -V` verify both, and refuse them forged.
    func verifyWithTools(_ device: Device) throws {
        let registrationHash = randomHash()
        var request = registrationRequest()
        request.clientData = .hash(registrationHash)
        let credential = try device.makeCredential(request)
        #expect(credential.format == "fido-u2f")
        let lines = Fido2ToolsTests.credentialLines(credential, clientDataHash: registrationHash, rpID: "example.org")
        let verified = try run("/usr/bin/fido2-cred", ["-V"], input: lines)
        #expect(verified.status == 0, "fido2-cred -V: \(verified.standardError)")
        let output = verified.standardOutput.split(separator: "\n", maxSplits: 1)
        #expect(output.first.map(String.init) == Data(credential.credentialID).base64EncodedString())
        let forgedCredential = Fido2ToolsTests.credentialLines(credential, clientDataHash: randomHash(), rpID: "example.org")
        #expect(try run("/usr/bin/fido2-cred", ["-V"], input: forgedCredential).status != 0)

        let publicKeyFile = directory.file("u2f-credential.pem")
        try String(output.last ?? "").write(toFile: publicKeyFile, atomically: true, encoding: .utf8)
        let assertionHash = randomHash()
        var assertion = assertionRequest(allow: [credential.credentialID])
        assertion.clientData = .hash(assertionHash)
        let statement = try device.getAssertion(assertion).statement(at: 0)
        let accepted = try run(
            "/usr/bin/fido2-assert", ["-V", publicKeyFile, "es256"],
            input: Fido2ToolsTests.assertionLines(statement, clientDataHash: assertionHash, rpID: "example.org"))
        #expect(accepted.status == 0, "fido2-assert -V: \(accepted.standardError)")
        let forged = try run(
            "/usr/bin/fido2-assert", ["-V", publicKeyFile, "es256"],
            input: Fido2ToolsTests.assertionLines(statement, clientDataHash: randomHash(), rpID: "example.org"))
        #expect(forged.status != 0)
    }
}
