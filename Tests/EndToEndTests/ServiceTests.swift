import AuthProtocol
import Foundation
import SystemKit
import TestSupport
import Testing

/// authkeyd started the way systemd starts it: `systemd-socket-activate`
/// listens, and on the first connection runs the daemon with the listening
/// socket in `LISTEN_FDS`; the test plays the service manager's other part,
/// the `NOTIFY_SOCKET` the daemon reports READY=1, RELOADING=1 and
/// STOPPING=1 to. And the units shipped in systemd/ agree with the daemon.
@Suite(.timeLimit(.minutes(2))) struct ServiceTests {
    @Test func theSystemServiceIsStartedByItsFirstClientAndServesThroughTheInheritedSocket() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd-svc")
        let config = directory.file("authkeyd.conf")
        try "usb = no\nvirtual-key = name=Activated Key,presence=immediate\nlog-level = debug\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        // As authkeyd.service runs it: no --socket, the state directory from
        // systemd's StateDirectory=.
        let service = try ActivatedService(
            directory: directory, arguments: ["--config", config],
            environment: ["STATE_DIRECTORY": directory.file("state")])
        #expect(service.notifications.next(timeout: .milliseconds(300)) == nil, "nothing runs before the first connection")

        let client = try service.connect()
        client.request(1, Method.hello, ["protocol": 1, "client": "service-test"])
        #expect(client.readReply(timeout: .seconds(15))?["result"]?["protocol"] == 1, "log:\n\(service.log)")
        let ready = try #require(service.notifications.next(timeout: .seconds(15)), "no READY=1; log:\n\(service.log)")
        #expect(ready.contains("READY=1"))
        // The process systemd started is the one that reports (NotifyAccess=main).
        #expect(ready.contains("MAINPID=\(service.pid)"))
        #expect(service.log.contains("using the socket systemd passed"))

        // Its registrations go to $STATE_DIRECTORY.
        let registered = try runWithin(
            .seconds(60), builtProduct("authctl"),
            ["--socket", service.socketPath, "register", "--rp", "service.example", "--user", "alice", "--no"])
        #expect(registered.succeeded, "authctl register: \(registered)\nlog:\n\(service.log)")
        #expect(FileManager.default.fileExists(atPath: directory.file("state/registrations/\(getuid()).json")))

        // systemctl reload: SIGHUP, reported as RELOADING=1, then READY=1.
        service.signal(SIGHUP)
        let reloading = service.notifications.next(timeout: .seconds(10))
        #expect(reloading?.contains("RELOADING=1") == true, "after SIGHUP: \(reloading ?? "nothing"); log:\n\(service.log)")
        let reloaded = service.notifications.next(timeout: .seconds(10))
        #expect(reloaded?.contains("READY=1") == true, "after the reload: \(reloaded ?? "nothing"); log:\n\(service.log)")

        // systemctl stop: SIGTERM, STOPPING=1, a clean exit; the socket is
        // systemd's, and stays for the next start.
        service.signal(SIGTERM)
        let stopping = service.notifications.next(timeout: .seconds(10))
        #expect(stopping?.contains("STOPPING=1") == true, "after SIGTERM: \(stopping ?? "nothing"); log:\n\(service.log)")
        #expect(waitUntil(timeout: .seconds(15)) { !service.isRunning }, "still running 15 s after SIGTERM; log:\n\(service.log)")
        #expect(service.exitCode == 0, "exit status \(service.exitDescription); log:\n\(service.log)")
        #expect(FileManager.default.fileExists(atPath: service.socketPath))
    }

    @Test func clientsThatConnectWhileTheServiceStartsAreAllServed() throws {
        let directory = TemporaryDirectory(prefix: "authkeyd-svc")
        let service = try ActivatedService(
            directory: directory, arguments: ["--usb", "no", "--state-dir", directory.file("state")], environment: [:])
        // Connected before the daemon runs: they wait in the socket's backlog.
        let clients = try (0..<5).map { _ in try service.connect() }
        for (index, client) in clients.enumerated() { client.request(index, Method.hello) }
        for (index, client) in clients.enumerated() {
            let reply = client.readReply(timeout: .seconds(15))
            #expect(reply?["id"] == .integer(Int64(index)) && reply?["result"]?["protocol"] == 1, "log:\n\(service.log)")
        }
    }

    /// The client whose connection started the daemon is answered once the
    /// keys present at start are in service, however slowly they come up:
    /// accepting at once, the daemon was seen to give it an empty list.
    /// Here the key's first getInfo reply comes 600 ms late.
    @Test func theFirstClientFindsAKeyThatIsSlowToComeUp() throws {
        let directory = TemporaryDirectory(prefix: "authkeyd-svc")
        let service = try ActivatedService(
            directory: directory,
            arguments: [
                "--usb", "no", "--state-dir", directory.file("state"),
                "--virtual-key", "name=Slow Key,fault=delay:600ms,fault-after=0",
            ],
            environment: [:])
        let client = try service.connect()
        client.request(1, Method.listAuthenticators)
        let listed = client.readReply(timeout: .seconds(15))?["result"]?["authenticators"]?.arrayValue
        #expect(listed?.map { $0["product"] } == ["Slow Key"], "log:\n\(service.log)")
    }

    /// As the user units run it: `authkeyd --user` on %t/authkeyd.sock,
    /// which authctl finds by itself through XDG_RUNTIME_DIR.
    @Test func theUserServiceServesItsUserOnTheRuntimeDirectorysSocket() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd-svc")
        let runtime = directory.file("run")
        let configDirectory = directory.file("config/authkeyd")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: configDirectory, withIntermediateDirectories: true)
        try "usb = no\nvirtual-key = name=User Key,presence=immediate\n"
            .write(toFile: "\(configDirectory)/authkeyd.conf", atomically: true, encoding: .utf8)
        let userUnit = try UnitFile("systemd/user/authkeyd.service")
        let arguments = try #require(userUnit["ExecStart"]).split(separator: " ").dropFirst().map(String.init)
        let service = try ActivatedService(
            directory: directory, socketPath: "\(runtime)/authkeyd.sock", arguments: arguments,
            environment: [
                "XDG_RUNTIME_DIR": runtime, "XDG_CONFIG_HOME": directory.file("config"),
                "XDG_STATE_HOME": directory.file("state"), "HOME": directory.path,
            ])
        let client = try service.connect()
        client.request(1, Method.hello)
        let hello = try #require(client.readReply(timeout: .seconds(15))?["result"], "log:\n\(service.log)")
        #expect(hello["uid"] == .integer(Int64(getuid())))
        #expect(hello["canManage"] == true, "the user manages their own instance's keys")

        let environment = ["XDG_RUNTIME_DIR": runtime, "AUTHKEYD_SOCKET": ""]
        let listed = try runWithin(.seconds(30), builtProduct("authctl"), ["list"], environment: environment)
        #expect(listed.succeeded && listed.standardOutput.contains("User Key"), "authctl list: \(listed)\nlog:\n\(service.log)")
        let registered = try runWithin(
            .seconds(60), builtProduct("authctl"), ["register", "--rp", "user.example", "--user", "bob", "--no"],
            environment: environment)
        #expect(registered.succeeded, "authctl register: \(registered)\nlog:\n\(service.log)")
        #expect(FileManager.default.fileExists(atPath: directory.file("state/authkeyd/registrations/\(getuid()).json")))
    }

    /// The waits above end: a program that outlives its time is killed and
    /// reported, and one that leaves a child holding its output open does
    /// not keep the test waiting for that child.
    @Test func aCommandThatOutlivesItsTimeIsKilledAndReported() throws {
        let stuck = try runWithin(.milliseconds(300), "/bin/sh", ["-c", "echo started; exec sleep 30"])
        #expect(stuck.timedOut && !stuck.succeeded && stuck.standardOutput == "started\n", "\(stuck)")
        #expect(stuck.elapsed < .seconds(5) && "\(stuck)".contains("did not finish"), "\(stuck)")
        let parent = try runWithin(.seconds(10), "/bin/sh", ["-c", "sleep 3 & echo done"])
        #expect(parent.succeeded && parent.standardOutput == "done\n" && parent.elapsed < .seconds(2), "\(parent)")
    }

    /// The units, the udev rule and the sysusers.d entry name the same
    /// socket, group and programs as the daemon's defaults.
    @Test func theUnitsAgreeWithTheDaemonsDefaults() throws {
        let helpRun = try runWithin(.seconds(30), builtProduct("authkeyd"), ["--help"])
        try #require(helpRun.succeeded, "authkeyd --help: \(helpRun)")
        let help = helpRun.standardOutput
        let socket = try UnitFile("systemd/authkeyd.socket")
        #expect(help.contains("default \(try #require(socket["ListenStream"]))"), "the socket unit listens where the daemon would")
        // The socket lets in the daemon's default allow-users: root and @authkeyd.
        #expect(socket["SocketUser"] == "root" && socket["SocketGroup"] == "authkeyd" && socket["SocketMode"] == "0660")
        #expect(help.contains("(default root, @authkeyd)"))

        let service = try UnitFile("systemd/authkeyd.service")
        // Socket-activated: the units let the daemon exit when idle (exit-idle).
        #expect(service["ExecStart"] == "/usr/local/bin/authkeyd --exit-idle 60s")
        #expect(help.contains("--exit-idle DURATION|off"))
        #expect(service["Type"] == "notify" && service["NotifyAccess"] == "main")
        #expect(service["StateDirectory"] == "authkeyd" && service["DynamicUser"] == "yes")
        let group = try #require(service["Group"])
        let rule = try String(contentsOfFile: repositoryPath("udev/71-authkeyd.rules"), encoding: .utf8)
        #expect(rule.contains("ENV{ID_FIDO_TOKEN}==\"1\", GROUP=\"\(group)\", MODE=\"0660\""))
        let sysusers = try String(contentsOfFile: repositoryPath("systemd/authkeyd.sysusers"), encoding: .utf8)
        #expect(sysusers.contains("\ng \(group) -") && sysusers.contains("\ng authkeyd -"))

        let userSocket = try UnitFile("systemd/user/authkeyd.socket")
        #expect(userSocket["ListenStream"] == "%t/authkeyd.sock" && userSocket["SocketMode"] == "0600")
        #expect(help.contains("$XDG_RUNTIME_DIR/authkeyd.sock"))
        #expect(try UnitFile("systemd/user/authkeyd.service")["ExecStart"] == "/usr/local/bin/authkeyd --user --exit-idle 60s")
    }
}

/// `systemd-socket-activate -l SOCKET authkeyd ARGUMENTS`, with a
/// `NOTIFY_SOCKET` of the test's own; SIGTERM and SIGKILL when let go.
///
/// Started with posix_spawn, not Foundation's `Process`: systemd-socket-
/// activate closes every descriptor it does not pass on, the one through
/// which `Process` learns that its child ended among them, and `Process`
/// then blocks in waitpid on a child still running, and with it every
/// other `Process` of the test.
///
/// Every wait here has a deadline, and says what it saw when it passes:
/// a service that does not start, answer or stop fails the test, with the
/// daemon's log, instead of holding it (and the tests waiting behind it)
/// for ever. `.timeLimit` alone cannot stop a test blocked in a system call.
private final class ActivatedService {
    let socketPath: String
    let logPath: String
    let pid: pid_t
    private var status: Int32?
    let notifications: NotifySocket

    init(directory: TemporaryDirectory, socketPath: String? = nil, arguments: [String], environment: [String: String]) throws {
        try #require(isInstalled("systemd-socket-activate"), "needs systemd-socket-activate (Debian package systemd)")
        self.socketPath = socketPath ?? directory.file("authkeyd.sock")
        logPath = directory.file("authkeyd.log")
        notifications = try NotifySocket(path: directory.file("notify.sock"))
        // systemd-socket-activate passes on only the variables -E names;
        // a sanitizer's options too (scripts/test-sanitizers sets them).
        let sanitizerOptions = ProcessInfo.processInfo.environment.filter { $0.key.hasSuffix("SAN_OPTIONS") }
        let passed = sanitizerOptions.merging(environment) { $1 }
            .merging(["NOTIFY_SOCKET": notifications.path]) { $1 }.sorted { $0.key < $1.key }
        pid = try spawn(
            "/usr/bin/systemd-socket-activate",
            ["--listen=\(self.socketPath)", "--fdname=authkeyd"] + passed.map { "--setenv=\($0.key)=\($0.value)" }
                + [builtProduct("authkeyd")] + arguments,
            output: .append(logPath))
        try #require(
            waitUntil(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: self.socketPath) },
            "systemd-socket-activate made no socket in 10 s; log:\n\(log)")
    }

    deinit {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if !waitUntil(timeout: .seconds(10), { !isRunning }) {
            kill(pid, SIGKILL)
            _ = waitUntil(timeout: .seconds(5)) { !isRunning }
        }
    }

    var log: String { fileText(logPath) }

    func signal(_ number: Int32) { kill(pid, number) }

    /// A client of the socket. The socket file appears at bind(2), a moment
    /// before listen(2): a refused connection is tried again, for 5 s.
    func connect() throws -> RawRPCClient {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            do { return try RawRPCClient(socketPath: socketPath) } catch {
                guard ContinuousClock.now < deadline else {
                    Issue.record("cannot connect to \(socketPath): \(error); log:\n\(log)")
                    throw error
                }
                usleep(20_000)
            }
        }
    }

    /// Reaps the process when it has ended.
    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
        status = raw
        return false
    }

    /// The exit code, once it has exited by itself (nil for a signal).
    var exitCode: Int32? {
        guard let status, status & 0x7F == 0 else { return nil }
        return (status >> 8) & 0xFF
    }

    var exitDescription: String {
        guard let status else { return "none: still running" }
        return status & 0x7F == 0 ? String((status >> 8) & 0xFF) : "none: killed by signal \(status & 0x7F)"
    }
}

/// The service manager's end of sd_notify(3): a datagram socket the daemon
/// sends `READY=1` and the like to.
private final class NotifySocket {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = try UnixSocket.boundDatagram(path: path)
    }

    deinit { close(fd) }

    /// The next notification, or nil when none comes in time. The deadline
    /// holds across interruptions: poll(2) is asked again only for what is
    /// left of it.
    func next(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = (deadline - ContinuousClock.now).wholeMilliseconds
            guard left > 0 else { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: left))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
        }
    }
}

/// A unit file's `Key=Value` lines (the last of each key; comments aside).
private struct UnitFile {
    private var values: [String: String] = [:]

    init(_ relativePath: String) throws {
        for line in try String(contentsOfFile: repositoryPath(relativePath), encoding: .utf8).split(separator: "\n") {
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
    }

    subscript(key: String) -> String? { values[key] }
}
