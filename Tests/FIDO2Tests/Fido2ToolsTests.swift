import CBOR
import FIDO2
import Foundation
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// Credentials and assertions from the virtual key, checked by independent
/// verifiers: Debian's `fido2-cred -V` and `fido2-assert -V`.
@Suite struct Fido2ToolsTests {
    let directory = TemporaryDirectory()

    /// fido2-cred(1) INPUT FORMAT for -V.
    static func credentialLines(_ credential: Credential, clientDataHash: [UInt8], rpID: String) -> String {
        var lines = [
            Data(clientDataHash).base64EncodedString(), rpID, credential.format,
            Data(credential.authenticatorDataCBOR).base64EncodedString(),
            Data(credential.credentialID).base64EncodedString(),
            Data(credential.attestationSignature).base64EncodedString(),
        ]
        if !credential.attestationCertificate.isEmpty {
            lines.append(Data(credential.attestationCertificate).base64EncodedString())
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// fido2-assert(1) INPUT FORMAT for -V.
    static func assertionLines(_ statement: AssertionStatement, clientDataHash: [UInt8], rpID: String) -> String {
        [
            Data(clientDataHash).base64EncodedString(), rpID,
            Data(CBOR.bytes(statement.authenticatorData).encoded()).base64EncodedString(),
            Data(statement.signature).base64EncodedString(),
        ].joined(separator: "\n") + "\n"
    }

    /// Registers on `device` with a known client data hash.
    func register(on device: Device, algorithm: COSEAlgorithm = .es256) throws -> (credential: Credential, clientDataHash: [UInt8]) {
        let clientDataHash = randomHash()
        var request = registrationRequest()
        request.clientData = .hash(clientDataHash)
        request.algorithm = algorithm
        return (try device.makeCredential(request), clientDataHash)
    }

    /// Registers and authenticates on `device`, then has the tools verify both.
    /// `type` is the tools' name of the algorithm: es256 or eddsa.
    func verifyWithTools(_ device: Device, algorithm: COSEAlgorithm = .es256, type: String = "es256") throws {
        try #require(isInstalled("fido2-cred") && isInstalled("fido2-assert"), "needs Debian's fido2-tools")
        let (credential, registrationHash) = try register(on: device, algorithm: algorithm)
        let verified = try run("/usr/bin/fido2-cred", ["-V", type], input: Self.credentialLines(credential, clientDataHash: registrationHash, rpID: "example.org"))
        #expect(verified.status == 0, "fido2-cred -V: \(verified.standardError)")
        let lines = verified.standardOutput.split(separator: "\n", maxSplits: 1)
        #expect(lines.first.map(String.init) == Data(credential.credentialID).base64EncodedString())
        let publicKeyFile = directory.file("credential.pem")
        try String(lines.last ?? "").write(toFile: publicKeyFile, atomically: true, encoding: .utf8)

        let assertionHash = randomHash()
        var assertion = assertionRequest(allow: [credential.credentialID])
        assertion.clientData = .hash(assertionHash)
        let statement = try device.getAssertion(assertion).statement(at: 0)
        let accepted = try run(
            "/usr/bin/fido2-assert", ["-V", publicKeyFile, type],
            input: Self.assertionLines(statement, clientDataHash: assertionHash, rpID: "example.org"))
        #expect(accepted.status == 0, "fido2-assert -V: \(accepted.standardError)")

        // The same tools refuse a forged signature.
        let forged = try run(
            "/usr/bin/fido2-assert", ["-V", publicKeyFile, type],
            input: Self.assertionLines(statement, clientDataHash: randomHash(), rpID: "example.org"))
        #expect(forged.status != 0)
    }

    @Test func inProcessKeyOutputsVerify() throws {
        try verifyWithTools(try makeKey().openDevice())
    }

    @Test func socketKeyServedByAuthkeydVirtkeyVerifies() throws {
        let socket = directory.file("virtkey.sock")
        let server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", socket, "--name", "Tools Test Key"])
        defer { server.stop() }
        #expect(waitUntil { access(socket, F_OK) == 0 })
        let device = try Device.open(connection: try SocketConnection(path: socket), timeout: .seconds(10))
        try verifyWithTools(device)
    }

    @Test func edDSAOutputsVerifyAsEdDSA() throws {
        try verifyWithTools(try makeKey().openDevice(), algorithm: .edDSA, type: "eddsa")
        // The PEM fido2-cred prints is an Ed25519 key; read as ES256 the
        // same assertion does not verify.
        let (credential, hash) = try register(on: try makeKey().openDevice(), algorithm: .edDSA)
        let asES256 = try run("/usr/bin/fido2-cred", ["-V", "es256"], input: Self.credentialLines(credential, clientDataHash: hash, rpID: "example.org"))
        #expect(asES256.status != 0, "an EdDSA credential is not an ES256 one")
    }

    @Test func selfAttestedEdDSAVerifies() throws {
        try #require(isInstalled("fido2-cred"), "needs Debian's fido2-tools")
        let device = try makeKey { $0.attestation = .selfAttestation }.openDevice()
        let (credential, hash) = try register(on: device, algorithm: .edDSA)
        let result = try run("/usr/bin/fido2-cred", ["-V", "eddsa"], input: Self.credentialLines(credential, clientDataHash: hash, rpID: "example.org"))
        #expect(result.status == 0, "fido2-cred -V eddsa: \(result.standardError)")
        #expect(result.standardOutput.contains("BEGIN PUBLIC KEY"))
        let tampered = try run(
            "/usr/bin/fido2-cred", ["-V", "eddsa"], input: Self.credentialLines(credential, clientDataHash: randomHash(), rpID: "example.org"))
        #expect(tampered.status != 0)
    }

    @Test func selfAttestationVerifies() throws {
        try #require(isInstalled("fido2-cred"), "needs Debian's fido2-tools")
        let (credential, hash) = try register(on: try makeKey { $0.attestation = .selfAttestation }.openDevice())
        let result = try run("/usr/bin/fido2-cred", ["-V"], input: Self.credentialLines(credential, clientDataHash: hash, rpID: "example.org"))
        #expect(result.status == 0, "fido2-cred -V: \(result.standardError)")
        let tampered = try run("/usr/bin/fido2-cred", ["-V"], input: Self.credentialLines(credential, clientDataHash: randomHash(), rpID: "example.org"))
        #expect(tampered.status != 0)
    }
}
