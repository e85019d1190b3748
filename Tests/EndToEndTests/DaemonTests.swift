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

    @Test func infoCarriesTheFullGetInfo() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Info Key,pin=123456,capacity=7"])
        _ = try await daemon.waitForKeys(1)
        let client = try daemon.client()
        let details = try await client.authenticatorInfo("v1")
        #expect(details.authenticator.product == "Info Key")
        #expect(details.info.versions.contains("FIDO_2_1"))
        #expect(details.info.pinRetries == 8)
        #expect(details.info.uvRetries == 8)
        #expect(details.info.remainingDiscoverableCredentials == 7)
        #expect(details.info.options["clientPin"] == true)
        #expect(details.info.pinProtocols == [2, 1])
        do {
            _ = try await client.authenticatorInfo("v9")
            Issue.record("an unknown key was found")
        } catch {
            #expect(error.reason == .noAuthenticator)
        }
        let cli = try run(builtProduct("authctl"), ["--socket", daemon.socketPath, "info", "v1"])
        #expect(cli.status == 0)
        #expect(cli.standardOutput.contains("set, 8 attempts left"))
    }

    @Test func helloNegotiatesTheProtocol() async throws {
        let daemon = try DaemonProcess([])
        let client = try daemon.client()
        let hello = try await client.hello(client: "tests/1")
        #expect(hello.protocol == 1)
        #expect(hello.daemon.hasPrefix("authkeyd/"))
        #expect(hello.capabilities.contains(Method.selectAuthenticator))
        #expect(hello.uid == Int(getuid()))
        #expect(hello.canManage, "root is an admin by default")
        do {
            _ = try await client.call(Method.hello, HelloParams(protocol: 99, client: "future"), as: HelloResult.self)
            Issue.record("protocol 99 accepted")
        } catch {
            #expect(error.reason == .unsupported)
        }
    }

    @Test func touchToSelectReturnsTheTouchedKeyAndFreesTheOthers() async throws {
        let daemon = try DaemonProcess([
            "--virtual-key", "name=Never A,presence=never", "--virtual-key", "name=Touched,presence=after:200ms",
            "--virtual-key", "name=Never B,presence=never",
        ])
        _ = try await daemon.waitForKeys(3)
        let client = try daemon.client()
        let statuses = StatusLog()
        let clock = ContinuousClock()
        let started = clock.now
        let chosen = try await client.selectByTouch(timeout: .seconds(10)) { statuses.append($0.status) }
        #expect(chosen.product == "Touched")
        #expect(chosen.id == "v2")
        #expect(clock.now - started >= .milliseconds(200))
        #expect(statuses.all.contains(.selectingByTouch))
        // The keys that were not touched serve the next request at once.
        let afterwards = clock.now
        _ = try await client.authenticatorInfo("v1")
        _ = try await client.authenticatorInfo("v3")
        #expect(clock.now - afterwards < .seconds(1))

        let cli = try run(builtProduct("authctl"), ["--socket", daemon.socketPath, "select", "--timeout", "10"])
        #expect(cli.status == 0)
        #expect(cli.standardOutput.hasPrefix("v2"))
    }

    @Test func selectTimesOutAndCanBeCancelled() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "presence=never", "--virtual-key", "presence=never"])
        _ = try await daemon.waitForKeys(2)
        let client = try daemon.client()
        do {
            _ = try await client.selectByTouch(timeout: .milliseconds(300))
            Issue.record("nobody touched, yet a key was selected")
        } catch {
            #expect(error.reason == .timeout)
        }
        let started = ContinuousClock.now
        async let selection = client.call(
            Method.selectAuthenticator, SelectParams(timeout: 20_000), as: AuthenticatorEvent.self,
            onStart: { id in Task { try? await Task.sleep(for: .milliseconds(200)); try? await client.cancel(requestID: id) } })
        do {
            _ = try await selection
            Issue.record("a cancelled select succeeded")
        } catch let error as AuthClientError {
            #expect(error.reason == .cancelled)
        }
        #expect(ContinuousClock.now - started < .seconds(3))
        let cli = try run(builtProduct("authctl"), ["--socket", daemon.socketPath, "select", "--timeout", "0.3"])
        #expect(cli.status == 75)
    }
}

/// Collects statuses from the reader thread.
final class StatusLog: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [OperationStatus.Status] = []
    func append(_ status: OperationStatus.Status) { lock.withLock { statuses.append(status) } }
    var all: [OperationStatus.Status] { lock.withLock { statuses } }
}
