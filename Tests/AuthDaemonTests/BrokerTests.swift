import AuthClient
import AuthProtocol
import BrokerTestSupport
import Foundation
import Glibc
import SystemKit
import TestSupport
import Testing

/// The broker's own calls in process (moved from EndToEndTests.DaemonTests
/// and TimingTests, which keep authctl's side of them): hello, getInfo,
/// touch to select, and a client that dies while a key waits.
@Suite(.timeLimit(.minutes(2))) struct BrokerTests {
    @Test func infoCarriesTheFullGetInfo() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Info Key,pin=123456,capacity=7"])
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
    }

    @Test func helloNegotiatesTheProtocol() async throws {
        let daemon = try await InProcessBroker([])
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
        let daemon = try await InProcessBroker([
            "--virtual-key", "name=Never A,presence=never", "--virtual-key", "name=Touched,presence=after:200ms",
            "--virtual-key", "name=Never B,presence=never",
        ])
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
    }

    @Test func selectTimesOutAndCanBeCancelled() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "presence=never", "--virtual-key", "presence=never"])
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
    }

    /// Requests share one timer armed for the earliest limit: a request
    /// started after a longer one, with a shorter limit, must move it.
    @Test func aShorterTimeLimitStartedLaterEndsOnTimeAndTheLongerOneRunsOn() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=A,presence=never", "--virtual-key", "name=B,presence=never"])
        let raw = try daemon.rawClient()
        func create(_ id: Int, on key: String, timeout: Int) throws {
            var params = WebAuthnFixtures.createParams(authenticator: key)
            params.timeout = timeout
            raw.request(id, Method.createCredential, try JSONValueEncoder().encode(params))
        }
        try create(1, on: "v1", timeout: 20_000)
        #expect(raw.readMessage()?["params"]?["status"] == "waitingForTouch")
        let clock = ContinuousClock()
        let started = clock.now
        try create(2, on: "v2", timeout: 300)
        let short = raw.readReply()
        #expect(short?["id"] == 2 && short?["error"]?["data"]?["reason"] == "timeout", "\(String(describing: short))")
        #expect(clock.now - started >= .milliseconds(250))
        #expect(clock.now - started < .seconds(3))
        // The long one is still waiting for its touch: cancelling it is what ends it.
        raw.request(3, Method.cancelOperation, ["id": 1])
        var replies: [JSONValue] = []
        while replies.count < 2, let reply = raw.readReply() { replies.append(reply) }
        #expect(replies.contains { $0["id"] == 1 && $0["error"]?["data"]?["reason"] == "cancelled" }, "\(replies)")
    }

    @Test func aClientThatDiesWhileTheKeyWaitsFreesItWithinASecond() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Stuck,presence=never"])
        let dying = try daemon.rawClient()
        dying.request(1, Method.createCredential, try JSONValueEncoder().encode(WebAuthnFixtures.createParams()))
        #expect(dying.readMessage()?["params"]?["status"] == "waitingForTouch")
        let other = try daemon.client()
        let clock = ContinuousClock()
        async let info = other.authenticatorInfo("v1")
        try await Task.sleep(for: .milliseconds(100))
        let died = clock.now
        dying.disconnect()
        _ = try await info
        #expect(clock.now - died < .seconds(1))
    }
}

/// Collects statuses from the reader thread.
final class StatusLog: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [OperationStatus.Status] = []
    func append(_ status: OperationStatus.Status) { lock.withLock { statuses.append(status) } }
    var all: [OperationStatus.Status] { lock.withLock { statuses } }
}

/// The requester's heartbeat, and a client that gives up on a silent daemon.
@Suite(.timeLimit(.minutes(2))) struct SilenceTests {
    /// While a request waits (here for a touch that never comes), the
    /// requester hears its status again every few seconds: a live daemon
    /// is never silent for long.
    @Test func aWaitingRequestsStatusIsRepeated() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Untouched,presence=never"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let heard = Protected<[(status: OperationStatus.Status, at: ContinuousClock.Instant)]>([])
        let requestID = Protected<Int64?>(nil)
        var params = WebAuthnFixtures.createParams()
        params.timeout = 20_000
        let request = Task {
            try await client.call(
                Method.createCredential, params, as: CredentialResult.self,
                onStatus: { status in heard.withLock { $0.append((status.status, .now)) } },
                onStart: { id in requestID.withLock { $0 = id } })
        }
        #expect(await eventually(timeout: .seconds(15)) { heard.withLock { $0.count >= 2 } })
        let statuses = heard.withLock { $0 }
        #expect(statuses.prefix(2).map(\.status) == [.waitingForTouch, .waitingForTouch], "\(statuses.map(\.status))")
        if statuses.count >= 2 {
            let gap = statuses[1].at - statuses[0].at
            #expect(gap >= .seconds(4) && gap <= .seconds(11), "repeated after \(gap)")
        }
        if let id = requestID.withLock({ $0 }) { try await client.cancel(requestID: id) }
        _ = await request.result
    }

    /// A peer that takes the connection and never answers (a stopped
    /// daemon's socket): a client that gives up when silent fails its call
    /// after the limit, `notAnswering`; an idle connection is left alone.
    @Test func aClientGivesUpOnASilentDaemonOnlyWhileItOwesAnAnswer() async throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { FileDescriptor.close(pair[1]) }
        let client = AuthClient(connectedDescriptor: pair[0])
        client.giveUpWhenSilent(for: .milliseconds(600))
        try await Task.sleep(for: .milliseconds(900))
        let clock = ContinuousClock()
        let started = clock.now
        do {
            _ = try await client.hello(client: "silence-test/1")
            Issue.record("a silent peer answered hello")
        } catch {
            guard case .notAnswering(let limit) = error else { return #expect(Bool(false), "\(error)") }
            #expect(limit == .milliseconds(600))
        }
        let waited = clock.now - started
        #expect(waited >= .milliseconds(550) && waited < .seconds(3), "gave up after \(waited): idle time before the call does not count")
    }
}
