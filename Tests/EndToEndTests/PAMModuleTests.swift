import AuthProtocol
import Foundation
import Glibc
import TestSupport
import Testing

/// pam_authkeyd.so in the real PAM stack: libpam loads the built module
/// for a service of the test's own, pamtester authenticates through it
/// (its conversation reads the PIN from standard input), the real daemon
/// serves virtual keys. Each test reads the module's own account of what
/// it returned (`debug debug_file=`), besides pamtester's verdict.
@Suite(.timeLimit(.minutes(3)), .serialized) struct PAMModuleTests {
    let directory = TemporaryDirectory(prefix: "authkeyd-pam")
    var authFile: String { directory.file("u2f_keys") }
    var moduleLog: String { directory.file("module.log") }
    static let origin = "pam://authkeyd-test"

    /// A service whose module reads `authFile` and talks to `socket`.
    func service(_ socket: String, _ extra: [String] = []) throws -> PAMService {
        _ = FileManager.default.createFile(atPath: moduleLog, contents: nil)
        return try PAMService(arguments: [
            "socket=\(socket)", "authfile=\(authFile)", "origin=\(Self.origin)", "debug", "debug_file=\(moduleLog)",
        ] + extra)
    }

    /// `authctl pam register --print` for root on the daemon's key, with `options`.
    func registeredLine(_ daemon: DaemonProcess, _ options: [String] = [], pin: String? = nil) throws -> String {
        let pinFile = directory.file("pin")
        try (pin ?? "").appending("\n").write(toFile: pinFile, atomically: true, encoding: .utf8)
        let result = try run("/bin/sh", [
            "-c", "exec \"$0\" \"$@\" 3<\(pinFile)", builtProduct("authctl"), "--socket", daemon.socketPath, "pam", "register", "--print",
            "--origin", Self.origin,
        ] + options + (pin == nil ? [] : ["--pin-fd", "3"]))
        try #require(result.status == 0, "\(result.standardError)")
        #expect(!result.standardOutput.hasSuffix("\n"), "pamu2fcfg prints no line feed after the line")
        return result.standardOutput
    }

    func returned(_ code: String) -> Bool { fileText(moduleLog).contains("returns \(code)") }

    static func requirePAM() throws {
        try #require(PAMService.isAvailable, "needs root and pamtester (scripts/install-deps installs it)")
        try #require(FileManager.default.fileExists(atPath: PAMService.module), "swift build --build-tests builds \(PAMService.module)")
    }

    @Test func aLineFromAuthctlPamRegisterAuthenticatesWithTheTouchCue() async throws {
        try Self.requirePAM()
        let daemon = try DaemonProcess(["--virtual-key", "name=Desk key"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let line = try registeredLine(daemon)
        #expect(line.hasPrefix("root:") && line.hasSuffix(",es256,+presence"), "\(line)")
        try line.write(toFile: authFile, atomically: true, encoding: .utf8)
        let run = try service(daemon.socketPath, ["cue", "[cue_prompt=Tap the key now]"]).authenticate()
        #expect(run.succeeded, "\(run)\n\(fileText(moduleLog))")
        // pamtester's conversation (misc_conv) shows PAM_TEXT_INFO on standard output.
        #expect(run.standardOutput.contains("Tap the key now"), "\(run)")
        #expect(returned("PAM_SUCCESS"), "\(fileText(moduleLog))")
        #expect(daemon.log.contains("acts for root") == false, "root authenticating root acts for nobody else")
    }

    @Test func aLineBuiltByHandFromACredentialPythonFIDO2MadeOnTheKeyItself() async throws {
        try Self.requirePAM()
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let keySocket = directory.file("key.sock")
        let key = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", keySocket, "--name", "Socket key"])
        defer { key.stop() }
        #expect(waitUntil { access(keySocket, F_OK) == 0 })
        let made = try run(
            repositoryPath(".build/rp-venv/bin/python"), [repositoryPath("Tests/RelyingParty/pam_u2f_credential.py"), keySocket, Self.origin, "root"])
        try #require(made.status == 0, "\(made.standardError)")
        // pam_u2f's format, written here, not by any code of authkeyd's.
        try "root:\(made.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)),es256,+presence\n"
            .write(toFile: authFile, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(["--attach", "unix:\(keySocket)"], directory: directory)
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let run = try service(daemon.socketPath).authenticate()
        #expect(run.succeeded, "\(run)\n\(fileText(moduleLog))")
        #expect(returned("PAM_SUCCESS"), "\(fileText(moduleLog))")
    }

    @Test func thePINThroughTheConversationRightWrongAndBlocked() async throws {
        try Self.requirePAM()
        let daemon = try DaemonProcess(["--virtual-key", "name=PIN key,pin=1234"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        try registeredLine(daemon, ["--pin-verification"], pin: "1234").write(toFile: authFile, atomically: true, encoding: .utf8)
        let service = try service(daemon.socketPath)

        let right = try service.authenticate(input: "1234\n")
        #expect(right.succeeded, "\(right)\n\(fileText(moduleLog))")
        // ... and its prompts on standard error.
        #expect(right.standardError.contains("PIN for security key \"PIN key\" (8 attempts left): "), "\(right)")

        let corrected = try service.authenticate(input: "9999\n1234\n")
        #expect(corrected.succeeded, "\(corrected)")
        #expect(corrected.standardError.contains("Wrong PIN. PIN for security key \"PIN key\" (7 attempts left): "), "\(corrected)")

        // Three wrong PINs: the module stops asking; the key then refuses
        // any PIN until it is plugged in again (CTAP's PIN_AUTH_BLOCKED).
        let wrong = try service.authenticate(input: "9999\n9998\n9997\n9996\n")
        #expect(wrong.status != 0 && returned("PAM_AUTH_ERR"), "\(wrong)")
        let blocked = try service.authenticate(input: "1234\n")
        #expect(blocked.status != 0, "\(blocked)")
        #expect(fileText(moduleLog).contains("too many wrong PINs in a row"), "\(fileText(moduleLog))")
        #expect(!fileText(moduleLog).contains("1234") && !daemon.log.contains("1234"), "a PIN reached a log")
    }

    @Test func presenceWithoutATouchInTimeFails() async throws {
        try Self.requirePAM()
        // Registered while the key is touched; then the same key (its state
        // file) is never touched again.
        let state = directory.file("key.state")
        let registering = try DaemonProcess(["--virtual-key", "name=Desk key,state=\(state)"])
        _ = try await registering.waitForKeys(1)
        try registeredLine(registering).write(toFile: authFile, atomically: true, encoding: .utf8)
        _ = registering.stop()
        let daemon = try DaemonProcess(["--virtual-key", "name=Desk key,state=\(state),presence=never,presence-timeout=300ms"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let run = try service(daemon.socketPath).authenticate()
        #expect(run.status != 0, "\(run)")
        #expect(returned("PAM_AUTH_ERR"), "\(fileText(moduleLog))")
    }

    @Test func withoutTheDaemonTheModuleIsUnavailableWithinASecond() throws {
        try Self.requirePAM()
        try "root:\(Base64.encode([UInt8](repeating: 1, count: 64))),\(Base64.encode([UInt8](repeating: 2, count: 64))),es256,+presence"
            .write(toFile: authFile, atomically: true, encoding: .utf8)
        let run = try service(directory.file("nobody-listens.sock")).authenticate()
        #expect(run.status != 0)
        #expect(run.elapsed < .seconds(1), "\(run)")
        #expect(returned("PAM_AUTHINFO_UNAVAIL"), "\(fileText(moduleLog))")
        #expect(fileText(moduleLog).contains("authkeyd is not running"), "\(fileText(moduleLog))")
    }

    /// A daemon stopped by SIGSTOP (or deadlocked) still takes the
    /// connection (the kernel's backlog does), but never answers: the
    /// module gives up after two seconds and says it is unavailable, so a
    /// `sufficient` line in sudo falls through to the password instead of
    /// hanging.
    @Test func aFrozenDaemonIsUnavailableWithinSecondsNotAHang() async throws {
        try Self.requirePAM()
        try "root:\(Base64.encode([UInt8](repeating: 1, count: 64))),\(Base64.encode([UInt8](repeating: 2, count: 64))),es256,+presence"
            .write(toFile: authFile, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(["--virtual-key", "name=Frozen"], directory: directory)
        _ = try await daemon.waitForKeys(1)
        daemon.signal(SIGSTOP)
        defer {
            daemon.signal(SIGCONT)
            _ = daemon.stop()
        }
        let run = try service(daemon.socketPath).authenticate()
        #expect(run.status != 0)
        #expect(run.elapsed < .seconds(5), "\(run)")
        #expect(returned("PAM_AUTHINFO_UNAVAIL"), "\(fileText(moduleLog))")
        #expect(fileText(moduleLog).contains("did not answer"), "\(fileText(moduleLog))")
    }

    @Test func aUserWithoutALineIsUnknownOrIgnoredWithNouserok() throws {
        try Self.requirePAM()
        try "someoneelse:\(Base64.encode([1, 2, 3])),\(Base64.encode([UInt8](repeating: 2, count: 64))),es256,+presence\n"
            .write(toFile: authFile, atomically: true, encoding: .utf8)
        let unknown = try service(directory.file("unused.sock")).authenticate()
        #expect(unknown.status != 0)
        #expect(returned("PAM_USER_UNKNOWN"), "\(fileText(moduleLog))")
        let ignored = try service(directory.file("unused.sock"), ["nouserok"]).authenticate()
        #expect(returned("PAM_IGNORE"), "\(fileText(moduleLog))")
        _ = ignored
    }

    @Test func aFakeDaemonsWrongSignatureAndReplayedAnswerAreRefused() async throws {
        try Self.requirePAM()
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let daemon = try DaemonProcess(["--virtual-key", "name=Desk key"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let line = try registeredLine(daemon)
        try line.write(toFile: authFile, atomically: true, encoding: .utf8)

        // A genuine answer of the real daemon, for an earlier clientDataHash.
        let handle = try #require(line.split(separator: ":")[1].split(separator: ",").first.flatMap { Base64.decode(String($0)) })
        var params = GetParams(challenge: nil, rpId: Self.origin)
        params.clientDataHash = Base64URLBytes(randomHash())
        params.allowCredentials = [CredentialDescriptor(id: Base64URLBytes(handle))]
        let earlier = try await daemon.client().call(Method.getCredential, params, as: JSONValue.self)
        let recorded = directory.file("recorded.json")
        try earlier.jsonText.write(toFile: recorded, atomically: true, encoding: .utf8)

        for (mode, arguments) in [("wrong-signature", [String]()), ("replay", [recorded])] {
            let socket = directory.file("\(mode).sock")
            let fake = try StartedProgram(
                repositoryPath(".build/rp-venv/bin/python"), [repositoryPath("Tests/RelyingParty/fake_authkeyd.py"), socket, mode] + arguments)
            #expect(waitUntil { fake.standardOutput.contains("ready") }, "\(fake.standardError)")
            let run = try service(socket).authenticate()
            #expect(run.status != 0, "\(mode): \(run)")
            #expect(returned("PAM_AUTH_ERR"), "\(mode): \(fileText(moduleLog))")
            #expect(fileText(moduleLog).contains("the signature does not verify with the enrolled public key"), "\(mode): \(fileText(moduleLog))")
            #expect(fake.standardError.contains("answered credentials.get"), "\(mode): the module asked the fake daemon")
            fake.signal(SIGKILL)
        }
    }

    @Test(arguments: [
        ("bad base64", "root:!!!,\(Base64.encode([UInt8](repeating: 2, count: 64))),es256,+presence\n", "the key handle is not base64"),
        ("unknown type", "root:\(Base64.encode([1, 2, 3])),\(Base64.encode([UInt8](repeating: 2, count: 64))),es384,+presence\n", "unknown key type"),
        ("a 10 MB line", "root:" + String(repeating: "A", count: 10 << 20) + "\n", "more than the"),
    ])
    func aMalformedAuthfileIsLoggedAndUnavailable(_ what: String, _ contents: String, _ reason: String) throws {
        try Self.requirePAM()
        try contents.write(toFile: authFile, atomically: true, encoding: .utf8)
        let run = try service(directory.file("unused.sock")).authenticate()
        #expect(run.status != 0 && run.signal == nil, "\(what): pamtester \(run)")
        #expect(returned("PAM_AUTHINFO_UNAVAIL"), "\(what): \(fileText(moduleLog))")
        #expect(fileText(moduleLog).contains(reason), "\(what): \(fileText(moduleLog))")
    }

    @Test func onlyRootMayActForAnotherUser() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv")
        let daemon = try DaemonProcess.openToEveryone(["--virtual-key", "name=Desk key"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        var params = GetParams(challenge: nil, rpId: Self.origin)
        params.clientDataHash = Base64URLBytes(randomHash())
        params.onBehalfOf = "root"
        let request = #"{"jsonrpc":"2.0","id":1,"method":"credentials.get","params":\#(try JSONValueEncoder().encode(params).jsonText)}"#
        let (replies, _) = try OtherUser.exchange([request + "\n"], socketPath: daemon.socketPath)
        #expect(replies.first?.errorReason == "permissionDenied", "\(replies)")
        #expect(daemon.log.contains("refused onBehalfOf \"root\" from uid 65534"), "\(daemon.log)")
    }

    @Test func registerAddsToTheUsersLineAndListShowsWhichKeysArePluggedIn() async throws {
        try Self.requirePAM()
        let daemon = try DaemonProcess(["--virtual-key", "name=Desk key", "--virtual-key", "name=Spare key"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(2)
        let authctl = [builtProduct("authctl"), "--socket", daemon.socketPath, "pam"]
        for key in ["v1", "v2"] {
            let added = try run(authctl[0], Array(authctl.dropFirst()) + ["register", "--origin", Self.origin, "--authfile", authFile, "--authenticator", key])
            #expect(added.status == 0, "\(added.standardError)")
        }
        let contents = fileText(authFile)
        #expect(contents.split(separator: "\n").count == 1 && contents.hasPrefix("root:"), "one line for root: \(contents)")
        #expect(contents.split(separator: ":").count == 3, "two credentials on it: \(contents)")
        var status = stat()
        #expect(stat(authFile, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let listed = try run(authctl[0], Array(authctl.dropFirst()) + ["list", "--origin", Self.origin, "--authfile", authFile])
        #expect(listed.status == 0, "\(listed.standardError)")
        let rows = listed.standardOutput.split(separator: "\n").filter { $0.hasPrefix("1 ") || $0.hasPrefix("2 ") }
        #expect(rows.count == 2 && rows[0].hasSuffix("v1 (Desk key)") && rows[1].hasSuffix("v2 (Spare key)"), "\(listed.standardOutput)")
        // Either key now logs root in.
        #expect(try service(daemon.socketPath).authenticate().succeeded, "\(fileText(moduleLog))")
    }

    /// sudo authenticating another user: the module, as root, acts for
    /// them; the daemon logs who for whom, and the user's own session agent
    /// (not root's) is told who wants the key and shows the touch cue.
    @Test func rootActingForAUserReachesThatUsersAgent() async throws {
        try Self.requirePAM()
        try #require(OtherUser.isAvailable, "needs root and setpriv")
        let daemon = try DaemonProcess.openToEveryone(["--virtual-key", "name=Desk key,presence=after:1s"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        // nobody's line, in a root-owned authfile (as /etc/u2f_mappings would be).
        let line = try registeredLine(daemon)
        try line.replacingOccurrences(of: "root:", with: "nobody:").write(toFile: authFile, atomically: true, encoding: .utf8)
        let agent = try TerminalSession(OtherUser.command + [builtProduct("authctl"), "--socket", daemon.socketPath, "agent"])
        try #require(agent.waitFor("of uid 65534's programs"), "nobody's agent did not register")

        let sudo = try service(daemon.socketPath).authenticate("nobody")
        #expect(sudo.succeeded, "\(sudo)\n\(fileText(moduleLog))")
        #expect(agent.waitFor("pamtester (pid "), "the agent was not told who asked")
        #expect(agent.waitFor("pam_authkeyd/\(pamModuleVersion)) wants to sign in to \(Self.origin)"))
        #expect(agent.waitFor("Touch your security key"), "the agent showed no touch cue")
        #expect(daemon.log.contains("acts for nobody (uid 65534): credentials.get at \(Self.origin)"), "\(daemon.log)")
        _ = try TestSupport.run("/usr/bin/pkill", ["-KILL", "-f", "authctl --socket \(daemon.socketPath) agent"])
        _ = agent.finish()
    }
}

/// The module's version, as it names itself in hello.
let pamModuleVersion = "0.1.0"
