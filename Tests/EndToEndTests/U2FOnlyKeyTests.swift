import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// The real `authkeyd` serving a key that speaks only U2F (CTAP1): over a
/// socket from `authkeyd-virtkey --ctap u2f`, and what authctl shows and
/// prints for one (verified by Debian's fido2-tools). The virtual key's
/// `ctap=u2f` in process is tested against the broker in process:
/// AuthDaemonTests.U2FOnlyKeyTests.
@Suite(.timeLimit(.minutes(3))) struct U2FOnlyKeyTests {
    @Test func aU2FKeyOnASocketFromAuthkeydVirtkey() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let socket = directory.file("u2f.sock")
        let server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", socket, "--ctap", "u2f", "--name", "Socket U2F"])
        defer { server.stop() }
        #expect(waitUntil { access(socket, F_OK) == 0 })
        let daemon = try DaemonProcess(["--attach", "unix:\(socket)"], directory: directory)
        let keys = try await daemon.waitForKeys(1)
        #expect(keys.first?.id == "s1" && keys.first?.ctap == .u2f)
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        try await U2FChecks.registerAndAuthenticate(client, key: "s1")
    }

    /// authctl lists a U2F key as one, in JSON.
    @Test func authctlListsAU2FKeyAsU2F() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Old U2F Key,ctap=u2f,presence=after:200ms"])
        _ = try await daemon.waitForKeys(1)
        let listed = try authctl(daemon, ["list", "--json"]).json()
        #expect(listed["authenticators"]?.arrayValue?.first?["ctap"] == "u2f")
    }

    /// authctl says what a U2F key cannot do, and exits with its unsupported status.
    @Test func authctlSaysAU2FKeyCannotSetAPIN() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=U2F,ctap=u2f"])
        _ = try await daemon.waitForKeys(1)
        let pin = try authctl(daemon, ["pin", "set", "v1", "--pin-fd", "3"], pins: "123456\n123456\n")
        #expect(pin.status != 0 && pin.standardError.contains("U2F (CTAP1)"), "\(pin)")
    }

    /// `authctl register` and `authctl assert` print what Debian's
    /// fido2-tools verify, for a fido-u2f credential too.
    @Test func fido2ToolsVerifyWhatAuthctlPrintsForAU2FKey() async throws {
        try #require(isInstalled("fido2-cred") && isInstalled("fido2-assert"), "needs Debian's fido2-tools")
        let daemon = try DaemonProcess(["--virtual-key", "name=U2F,ctap=u2f"])
        _ = try await daemon.waitForKeys(1)
        let registered = try authctl(daemon, ["register", "--rp", "example.org", "--user", "alice", "--format", "fido2-tools"])
        try #require(registered.status == 0, "\(registered.standardError)\n\(daemon.log)")
        let lines = registered.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 7 && lines[2] == "fido-u2f", "\(lines)")
        let verified = try run("/usr/bin/fido2-cred", ["-V"], input: registered.standardOutput)
        try #require(verified.status == 0, "fido2-cred -V: \(verified.standardError)")
        let forgedRegistration = registered.standardOutput.replacingOccurrences(of: "\nexample.org\n", with: "\nexample.com\n")
        #expect(try run("/usr/bin/fido2-cred", ["-V"], input: forgedRegistration).status != 0)

        let directory = TemporaryDirectory()
        let publicKey = directory.file("u2f.pem")
        try String(verified.standardOutput.drop { $0 != "\n" }.dropFirst()).write(toFile: publicKey, atomically: true, encoding: .utf8)
        let credentialID = lines[4].replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let asserted = try authctl(daemon, ["assert", "--rp", "example.org", "--credential", credentialID, "--format", "fido2-tools"])
        try #require(asserted.status == 0, "\(asserted.standardError)\n\(daemon.log)")
        #expect(try run("/usr/bin/fido2-assert", ["-V", "-p", publicKey, "es256"], input: asserted.standardOutput).status == 0)
        let forged = asserted.standardOutput.replacingOccurrences(of: "\nexample.org\n", with: "\nexample.com\n")
        #expect(try run("/usr/bin/fido2-assert", ["-V", publicKey, "es256"], input: forged).status != 0)
    }
}
