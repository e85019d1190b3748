import AuthClient
import AuthProtocol
import Foundation
import TestSupport
import Testing

/// A figure in milliseconds the project holds the daemon to: a watcher
/// (authkeyd-protocol(7), NOTIFICATIONS, `authenticators.added`) hears a
/// key attached or removed within 100 ms. `make test` runs the end-to-end
/// tests one at a time (`--no-parallel`), so nothing else shares the two
/// cores while these measure.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TimingTests {
    @Test func aWatcherSeesAttachAndRemovalWithin100Milliseconds() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let keySocket = directory.file("key.sock")
        let daemon = try DaemonProcess(["--attach", "unix:\(keySocket)"], directory: directory)
        let client = try daemon.client()
        #expect(try await client.watchAuthenticators().isEmpty)
        var events = client.authenticatorEvents.makeAsyncIterator()
        let clock = ContinuousClock()

        for cycle in 0..<3 {
            let server = try BackgroundProcess(builtProduct("authkeyd-virtkey"), ["--socket", keySocket])
            #expect(waitUntil(timeout: .seconds(10)) { access(keySocket, F_OK) == 0 })
            let appeared = clock.now
            let added = await events.next()
            let addedAfter = clock.now - appeared
            guard case .added(let key)? = added else {
                Issue.record("expected added, got \(String(describing: added))")
                return
            }
            #expect(key.transport == .socket)
            #expect(addedAfter < .milliseconds(100), "cycle \(cycle): added after \(addedAfter)")

            // SIGKILL on odd cycles: a crashed server leaves its socket file
            // behind. The clock starts when the server is gone: its exit.
            if cycle % 2 == 0 {
                server.stop()
            } else {
                kill(server.process.processIdentifier, SIGKILL)
                server.process.waitUntilExit()
            }
            let gone = clock.now
            let removed = await events.next()
            let removedAfter = clock.now - gone
            #expect(removed == .removed(key), "cycle \(cycle)")
            #expect(removedAfter < .milliseconds(100), "cycle \(cycle): removed after \(removedAfter)")
            server.stop()
            unlink(keySocket)
        }
    }
}
