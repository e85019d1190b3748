import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// Who may connect, how many at once, and how the daemon starts, reloads
/// and stops.
@Suite(.timeLimit(.minutes(2))) struct DaemonLifecycleTests {
    @Test func anUnauthorizedUIDIsRefusedAndAnAuthorizedOneServed() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv to act as another uid")
        let directory = TemporaryDirectory(prefix: "authkeyd")
        chmod(directory.path, 0o755)
        let daemon = try DaemonProcess(
            ["--virtual-key", "name=Policy Key", "--allow-users", "root", "--socket-mode", "0666"], directory: directory)
        _ = try await daemon.waitForKeys(1)
        let authctl = builtProduct("authctl")
        let asNobody = try OtherUser.run(authctl, ["--socket", daemon.socketPath, "list"])
        #expect(asNobody.status == 77, "stderr: \(asNobody.standardError)")
        #expect(asNobody.standardError.contains("may not use authkeyd"))
        let asRoot = try run(authctl, ["--socket", daemon.socketPath, "list"])
        #expect(asRoot.status == 0)
        #expect(asRoot.standardOutput.contains("Policy Key"))
        #expect(daemon.log.contains("refused uid 65534"))
    }

    @Test func theSocketFileFollowsThePolicy() throws {
        let daemon = try DaemonProcess(["--allow-users", "root"])
        var info = stat()
        #expect(stat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "root alone: owner only")
        let open = try DaemonProcess(["--allow-users", "*"])
        #expect(stat(open.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o666)
    }

    @Test func twoHundredClientsAtOnceAllGetTheirList() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Crowd Key"])
        _ = try await daemon.waitForKeys(1)
        let clients = try (0..<200).map { _ in try RawRPCClient(socketPath: daemon.socketPath) }
        for (index, client) in clients.enumerated() { client.request(index, Method.listAuthenticators) }
        var served = 0
        for (index, client) in clients.enumerated() {
            let reply = client.readReply(timeout: .seconds(10))
            if reply?["id"] == .integer(Int64(index)), reply?["result"]?["authenticators"]?.arrayValue?.count == 1 { served += 1 }
        }
        #expect(served == 200)
    }

    @Test func clientsAboveTheCapAreRefusedCleanly() async throws {
        let daemon = try DaemonProcess(["--max-clients", "3"])
        let kept = try (0..<3).map { _ in try RawRPCClient(socketPath: daemon.socketPath) }
        for (index, client) in kept.enumerated() { client.request(index, Method.hello) }
        for client in kept { #expect(client.readReply()?["result"] != nil) }
        let extra = try RawRPCClient(socketPath: daemon.socketPath)
        let refusal = extra.readMessage()
        #expect(refusal?["error"]?["data"]?["reason"] == "busy")
        #expect(extra.isClosedByPeer())
    }

    @Test func aSecondDaemonOnTheSameSocketRefusesAndAStaleSocketIsReplaced() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let first = try DaemonProcess([], directory: directory)
        let second = try DaemonProcess([], directory: directory, waitForReady: false)
        second.process.waitUntilExit()
        #expect(second.process.terminationStatus == 1)
        #expect(second.log.contains("another authkeyd is already serving"))
        #expect(try await first.client().hello(client: "still-there").protocol == 1)

        // A SIGKILLed daemon leaves its socket file; the next one replaces it.
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        #expect(access(first.socketPath, F_OK) == 0)
        let third = try DaemonProcess([], directory: directory)
        #expect(try await third.client().hello(client: "after-crash").protocol == 1)
    }

    @Test func sigtermTellsClientsAndExitsWithinFiveSeconds() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "presence=never"])
        _ = try await daemon.waitForKeys(1)
        let waiting = try RawRPCClient(socketPath: daemon.socketPath)
        waiting.request(1, Method.selectAuthenticator, ["timeout": 30_000])
        #expect(waiting.readMessage()?["params"]?["status"] == "selectingByTouch")
        let idle = try RawRPCClient(socketPath: daemon.socketPath)
        idle.request(1, Method.hello)
        _ = idle.readReply()
        daemon.signal(SIGTERM)
        #expect(daemon.receiveNotification(timeout: .seconds(5))?.contains("STOPPING=1") == true)
        let reply = waiting.readReply()
        #expect(reply?["error"]?["data"]?["reason"] == "shuttingDown")
        #expect(idle.readMessage()?["method"] == "daemon.shuttingDown")
        #expect(daemon.stop() < .seconds(5))
        #expect(daemon.process.terminationStatus == 0)
        #expect(access(daemon.socketPath, F_OK) != 0, "the socket file is removed")
    }

    /// A service manager or an impatient user may send SIGTERM again while
    /// the daemon stops: it still ends cleanly, with status 0, not killed
    /// by the signal (CI once saw status 15 from the second SIGTERM of
    /// `DaemonProcess.stop()`).
    @Test func sigtermsRepeatedWhileStoppingStillExitCleanly() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "presence=never"])
        _ = try await daemon.waitForKeys(1)
        let deadline = ContinuousClock.now + .seconds(10)
        while daemon.process.isRunning, ContinuousClock.now < deadline {
            daemon.signal(SIGTERM)
            usleep(500)
        }
        daemon.process.waitUntilExit()
        #expect(daemon.process.terminationReason == .exit)
        #expect(daemon.process.terminationStatus == 0)
    }

    @Test func sighupReloadsTheConfigFile() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let config = directory.file("authkeyd.conf")
        try "virtual-key = name=First\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(["--config", config], directory: directory)
        #expect(try await daemon.waitForKeys(1).map(\.product) == ["First"])
        let client = try daemon.client()
        _ = try await client.watchAuthenticators()
        var events = client.authenticatorEvents.makeAsyncIterator()
        try "# the second key replaces the first\nvirtual-key = name=Second\nlog-level = debug\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(daemon.receiveNotification(timeout: .seconds(5))?.contains("RELOADING=1") == true)
        var seen: [AuthenticatorChange] = []
        while seen.count < 2, let event = await events.next() { seen.append(event) }
        #expect(seen.contains { if case .removed(let key) = $0 { return key.product == "First" }; return false })
        #expect(seen.contains { if case .added(let key) = $0 { return key.product == "Second" }; return false })
        // A broken file is refused and the running configuration kept.
        try "virtual-key = capacity=lots\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(waitUntil { daemon.log.contains("reload failed") })
        #expect(try await client.listAuthenticators().map(\.product) == ["Second"])
    }

    @Test func commandLineErrorsAreUsageErrors() throws {
        let bad = try run(builtProduct("authkeyd"), ["--virtual-key", "presence=sometimes"])
        #expect(bad.status == 64)
        #expect(bad.standardError.contains("presence"))
        let unknown = try run(builtProduct("authkeyd"), ["--frobnicate", "1"])
        #expect(unknown.status == 64)
        let help = try run(builtProduct("authkeyd"), ["--help"])
        #expect(help.status == 0 && help.standardOutput.contains("--virtual-key"))
        #expect(try run(builtProduct("authkeyd"), ["--version"]).standardOutput.hasPrefix("authkeyd "))
    }

    @Test func authctlExplainsAMissingDaemon() throws {
        let result = try run(builtProduct("authctl"), ["--socket", "/tmp/authkeyd-nobody-home.sock", "list"])
        #expect(result.status == 69)
        #expect(result.standardError.contains("is authkeyd running? try: systemctl start authkeyd.socket"))
        #expect(try run(builtProduct("authctl"), ["frobnicate"]).status == 64)
        #expect(try run(builtProduct("authctl"), ["info"]).status == 64)
    }

    /// PR_SET_DUMPABLE 0: the kernel hands the process's /proc files to
    /// root, so a daemon running as an ordinary user shows root as their
    /// owner, and that user cannot read its memory or ptrace it.
    @Test func theDaemonIsNotDumpable() throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv to act as another uid")
        let directory = TemporaryDirectory(prefix: "authkeyd")
        chmod(directory.path, 0o777)
        let socket = directory.file("authkeyd.sock")
        let daemon = try BackgroundProcess(
            OtherUser.command[0],
            Array(OtherUser.command.dropFirst()) + [builtProduct("authkeyd"), "--socket", socket, "--usb", "no", "--allow-users", "*"])
        defer { daemon.stop() }
        #expect(waitUntil { access(socket, F_OK) == 0 })
        var socketInfo = stat(), procInfo = stat()
        #expect(stat(socket, &socketInfo) == 0)
        #expect(socketInfo.st_uid == 65534, "the daemon runs as nobody")
        #expect(stat("/proc/\(daemon.process.processIdentifier)/mem", &procInfo) == 0)
        #expect(procInfo.st_uid == 0, "non-dumpable: /proc/PID/mem belongs to root, not nobody")
    }
}
