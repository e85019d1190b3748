import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// The real `authkeyd` on a temporary socket, talked to as clients do.
@Suite(.timeLimit(.minutes(2))) struct DaemonTests {
    @Test func listsVirtualAndAttachedKeys() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let keySocket = directory.file("key.sock")
        let server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", keySocket, "--name", "Socket Key"])
        defer { server.stop() }
        #expect(waitUntil { access(keySocket, F_OK) == 0 })
        let daemon = try DaemonProcess(
            ["--virtual-key", "name=Work Key", "--virtual-key=name=Home Key,pin=1234", "--attach", "unix:\(keySocket)"],
            directory: directory)
        let keys = try await daemon.waitForKeys(3)
        #expect(keys.map(\.transport) == [.virtual, .virtual, .socket])
        #expect(keys.map(\.id) == ["v1", "v2", "s1"])
        #expect(keys.map(\.product).prefix(2) == ["Work Key", "Home Key"])
        #expect(keys[1].pinSet && !keys[0].pinSet)
        #expect(keys[2].path == "unix:\(keySocket)")
        #expect(keys.allSatisfy { $0.aaguid == "61757468-6b65-7964-2d76-6b65792d3031" && $0.rk })

        let table = try run(builtProduct("authctl"), ["--socket", daemon.socketPath, "list"])
        #expect(table.status == 0)
        for id in ["v1", "v2", "s1"] { #expect(table.standardOutput.contains("\n\(id) ")) }
        #expect(table.standardOutput.contains("Work Key") && table.standardOutput.contains("socket"))

        let json = try run(builtProduct("authctl"), ["list", "--json", "--socket", daemon.socketPath])
        let listed = try JSONValueDecoder().decode(AuthenticatorList.self, from: try JSONParser().parse(Array(json.standardOutput.utf8.dropLast())))
        #expect(listed.authenticators == keys)
    }

    /// authctl's side of getInfo and touch to select, with their exit codes
    /// (the calls themselves: AuthDaemonTests.BrokerTests).
    @Test func authctlInfoShowsThePINsAttempts() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Info Key,pin=123456,capacity=7"])
        _ = try await daemon.waitForKeys(1)
        let cli = try run(builtProduct("authctl"), ["--socket", daemon.socketPath, "info", "v1"])
        #expect(cli.status == 0)
        #expect(cli.standardOutput.contains("set, 8 attempts left"))
    }

    @Test func authctlSelectPrintsTheTouchedKeyOrTimesOut() async throws {
        let touched = try DaemonProcess([
            "--virtual-key", "name=Never A,presence=never", "--virtual-key", "name=Touched,presence=after:200ms",
            "--virtual-key", "name=Never B,presence=never",
        ])
        _ = try await touched.waitForKeys(3)
        let cli = try run(builtProduct("authctl"), ["--socket", touched.socketPath, "select", "--timeout", "10"])
        #expect(cli.status == 0)
        #expect(cli.standardOutput.hasPrefix("v2"))

        let untouched = try DaemonProcess(["--virtual-key", "presence=never", "--virtual-key", "presence=never"])
        _ = try await untouched.waitForKeys(2)
        let timedOut = try run(builtProduct("authctl"), ["--socket", untouched.socketPath, "select", "--timeout", "0.3"])
        #expect(timedOut.status == 75)
    }
}
