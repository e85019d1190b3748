import AuthClient
@testable import AuthDaemon
import AuthProtocol
import BrokerTestSupport
import Foundation
import Glibc
import Synchronization
import SystemKit
import TestSupport
import Testing

/// The first read of a user's registration file is made on the store's
/// thread, not the broker's queue: while it is held there the broker goes
/// on serving, the requests that need the file wait for the one read, and
/// a change asked for meanwhile is made to what the file held.
@Suite(.timeLimit(.minutes(2))) struct RegistrationReadTests {
    /// Holds every read of a registration file on the store's thread until
    /// released, counting them. (The store's thread may block; a test's
    /// task only polls.)
    final class HeldRead: Sendable {
        private let state = Mutex((reads: 0, released: false))

        var reads: Int { state.withLock { $0.reads } }

        func hold(_ uid: uid_t) {
            state.withLock { $0.reads += 1 }
            while !state.withLock({ $0.released }) { usleep(1_000) }
        }

        func release() { state.withLock { $0.released = true } }
    }

    /// A daemon whose user has `RegistrationStoreTests.version1File`, its
    /// reads held by `held`.
    static func daemon(holdingReadsWith held: HeldRead) async throws -> InProcessBroker {
        let daemon = try await InProcessBroker([])
        try Data(RegistrationStoreTests.version1File).write(to: URL(fileURLWithPath: RegistrationStoreTests.file(of: daemon)))
        let store = try #require(await daemon.broker.store)
        store.beforeRead.withLock { $0 = { uid in held.hold(uid) } }
        return daemon
    }

    @Test func theBrokerServesOthersWhileAFileIsReadAndTheReadIsMadeOnce() async throws {
        let held = HeldRead()
        defer { held.release() }
        let daemon = try await Self.daemon(holdingReadsWith: held)
        let first = try daemon.client(), second = try daemon.client(), other = try daemon.client()
        let firstList = Task { try await first.listRegistrations() }
        #expect(await eventually { held.reads == 1 })

        // The read is held on the store's thread: the broker's queue is free.
        #expect(try await other.listAuthenticators().isEmpty)
        let secondList = Task { try await second.listRegistrations() }
        // A round trip after the second request: it waits on the same read.
        _ = try await second.listAuthenticators()
        #expect(held.reads == 1)

        held.release()
        #expect(try await firstList.value == RegistrationStoreTests.version1Registrations)
        #expect(try await secondList.value == RegistrationStoreTests.version1Registrations)
        #expect(held.reads == 1)
    }

    @Test func aRenameAskedForDuringTheReadIsMadeToWhatTheFileHeld() async throws {
        let held = HeldRead()
        defer { held.release() }
        let daemon = try await Self.daemon(holdingReadsWith: held)
        let client = try daemon.client(), lister = try daemon.client()
        let listed = Task { try await lister.listRegistrations() }
        #expect(await eventually { held.reads == 1 })
        let renamed = Task { try await client.renameRegistration(id: "Zm9vYmFyYmF6", to: "Spare") }
        _ = try await client.listAuthenticators()

        held.release()
        #expect(try await renamed.value.friendlyName == "Spare")
        var expected = RegistrationStoreTests.version1Registrations
        expected[1].friendlyName = "Spare"
        let onDisk = try RegistrationFile.decode(try #require(try AtomicFile.read(RegistrationStoreTests.file(of: daemon))))
        #expect(onDisk == expected)
        #expect(try await client.listRegistrations() == expected)
        // What the first request was answered: the file before or after the
        // rename, never a list without the other record.
        #expect(try await listed.value.map(\.id) == expected.map(\.id))
        #expect(held.reads == 1)
    }
}
