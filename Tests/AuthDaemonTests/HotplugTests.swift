@testable import AuthDaemon
import BrokerTestSupport
import Dispatch
import FIDO2
import Glibc
import Hotplug
import SystemKit
import TestSupport
import Testing
import VirtualKey

/// What `USBKeyWatcher` makes of the keys present and of hotplug events,
/// driven by a scripted source: the keys the registry ends with, with no
/// USB hardware and no libudev.
@Suite(.timeLimit(.minutes(1))) struct HotplugTests {
    @Test func udevActionsBecomeAddedOrRemovedAndTheRestIsIgnored() {
        #expect(HotplugEvent(action: "add", node: "/dev/hidraw1") == .added(node: "/dev/hidraw1"))
        #expect(HotplugEvent(action: "bind", node: "/dev/hidraw1") == .added(node: "/dev/hidraw1"))
        #expect(HotplugEvent(action: "remove", node: "/dev/hidraw1") == .removed(node: "/dev/hidraw1"))
        for action in ["change", "unbind", "move", "online", ""] {
            #expect(HotplugEvent(action: action, node: "/dev/hidraw1") == nil, "\(action)")
        }
    }

    @Test func theKeysPresentAtStartComeUpInTheirOrderBeforeStartIsDone() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw3", "/dev/hidraw1"])
        await setup.start()
        #expect(await setup.keys() == ["u1 /dev/hidraw3", "u2 /dev/hidraw1"])
        #expect(setup.hotplug.isStarted)
    }

    @Test func aKeyPluggedInComesUpAndGoesWhenPulledOut() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1"])
        await setup.start()
        setup.hotplug.plug("/dev/hidraw2")
        #expect(await setup.eventually(["u1 /dev/hidraw1", "u2 /dev/hidraw2"]))
        setup.hotplug.unplug("/dev/hidraw1")
        #expect(await setup.eventually(["u2 /dev/hidraw2"]))
    }

    @Test func aKeyPluggedBackInComesUpUnderANewID() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1"])
        await setup.start()
        setup.hotplug.unplug("/dev/hidraw1")
        #expect(await setup.eventually([]))
        setup.hotplug.plug("/dev/hidraw1")
        #expect(await setup.eventually(["u2 /dev/hidraw1"]))
    }

    @Test func anAddForAKeyInServiceDoesNotBringItUpTwice() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1"])
        await setup.start()
        // Two keys at once: overlapping scans, each listing both. Which of
        // the two opens first (and so gets the lower id) is up to the scans.
        setup.hotplug.plug("/dev/hidraw2", "/dev/hidraw3")
        setup.hotplug.send(.added(node: "/dev/hidraw1"))
        let three = ["/dev/hidraw1", "/dev/hidraw2", "/dev/hidraw3"]
        #expect(await TestSupport.eventually { await setup.paths().sorted() == three })
        // A scan that started after all of these has finished: nothing more may come.
        setup.hotplug.plug("/dev/hidraw4")
        #expect(await TestSupport.eventually { await setup.paths().sorted() == three + ["/dev/hidraw4"] })
        #expect(await setup.keys().map { $0.split(separator: " ")[0] }.sorted() == ["u1", "u2", "u3", "u4"])
        #expect(setup.opened.withLock { $0 }.sorted() == three + ["/dev/hidraw4"], "each key opened once")
    }

    @Test func aRemoveForANodeWithNoKeyChangesNothing() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1"])
        await setup.start()
        setup.hotplug.send(.removed(node: "/dev/hidraw9"))
        setup.hotplug.plug("/dev/hidraw2")
        #expect(await setup.eventually(["u1 /dev/hidraw1", "u2 /dev/hidraw2"]))
    }

    @Test func aKeyThatCannotBeOpenedIsLeftOutAndTheOthersComeUp() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1", "/dev/broken", "/dev/hidraw2"])
        await setup.start()
        // The failed key used up an id: ids are never reused.
        #expect(await setup.keys() == ["u1 /dev/hidraw1", "u3 /dev/hidraw2"])
    }

    @Test func whenTheKeysCannotBeListedStartStillFinishes() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1"])
        setup.hotplug.failListing(true)
        await setup.start()
        #expect(await setup.keys() == [])
        setup.hotplug.failListing(false)
        setup.hotplug.plug("/dev/hidraw2")
        #expect(await setup.eventually(["u1 /dev/hidraw1", "u2 /dev/hidraw2"]))
    }

    @Test func withoutEventsTheKeysPresentStillComeUp() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1"])
        setup.hotplug.failStarting()
        await setup.start()
        #expect(await setup.keys() == ["u1 /dev/hidraw1"])
        #expect(!setup.hotplug.isStarted)
    }

    @Test func afterStopNoEventIsHandled() async throws {
        let setup = try await WatchedBroker(present: ["/dev/hidraw1"])
        await setup.start()
        setup.watcher.stop()
        setup.hotplug.unplug("/dev/hidraw1")
        // The event would have been handled by the time a scan started after it finishes.
        await setup.drainBrokerQueue()
        #expect(await setup.keys() == ["u1 /dev/hidraw1"])
    }
}

/// A broker in process, with a `USBKeyWatcher` on a scripted source whose
/// "USB keys" are virtual keys (any path but `/dev/broken` opens one).
private struct WatchedBroker {
    let daemon: InProcessBroker
    let hotplug: ScriptedHotplug
    let watcher: USBKeyWatcher
    /// The paths opened, in order.
    let opened = Protected<[String]>([])

    init(present: [String]) async throws {
        daemon = try await InProcessBroker([])
        hotplug = ScriptedHotplug(present: present)
        let opened = opened
        watcher = USBKeyWatcher(
            broker: daemon.broker, logger: Logger(level: .error, environment: [:]), hotplug: hotplug
        ) { descriptor throws(FIDO2Error) in
            opened.withLock { $0.append(descriptor.path) }
            if descriptor.path == "/dev/broken" { return try Device.open(path: "/nonexistent/hidraw") }
            let key = try! VirtualKey(configuration: VirtualKeyConfiguration(spec: "name=USB \(descriptor.path)"))
            return try Device.open(connection: key.connect(), name: descriptor.path)
        }
    }

    /// Starts the watcher; returns once the keys present are in service.
    func start() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            watcher.start { done.resume() }
        }
    }

    /// The broker's keys in its order, as "id path".
    func keys() async -> [String] {
        await daemon.broker.idsAndPaths()
    }

    func paths() async -> [String] { await keys().map { String($0.split(separator: " ")[1]) } }

    func eventually(_ expected: [String]) async -> Bool {
        await TestSupport.eventually { await keys() == expected }
    }

    /// Returns once what was queued on the broker's queue before has run.
    func drainBrokerQueue() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            daemon.broker.queue.async { done.resume() }
        }
    }
}

extension Broker {
    fileprivate func idsAndPaths() -> [String] { keys.ordered.map { "\($0.id) \($0.path)" } }
}

/// A hotplug source the test plays: the keys "present" and the events.
final class ScriptedHotplug: HotplugSource, @unchecked Sendable {
    private struct State {
        var present: [String]
        var queue: DispatchQueue?
        var handler: (@Sendable (HotplugEvent) -> Void)?
        var failsToList = false
        var failsToStart = false
    }
    private let state: Protected<State>

    init(present: [String]) {
        state = Protected(State(present: present))
    }

    /// Listing the keys present throws while `fails`, as a manifest that cannot be read.
    func failListing(_ fails: Bool) { state.withLock { $0.failsToList = fails } }

    /// `start` throws: no events will come.
    func failStarting() { state.withLock { $0.failsToStart = true } }

    var isStarted: Bool { state.withLock { $0.handler != nil } }

    func keysPresent() throws -> [DeviceDescriptor] {
        try state.withLock { state in
            if state.failsToList { throw SystemError("scripted manifest", code: EIO) }
            return state.present.map {
                DeviceDescriptor(path: $0, manufacturer: "Test", product: "USB \($0)", vendorID: 0x1050, productID: 0x0407)
            }
        }
    }

    func start(on queue: DispatchQueue, _ handler: @escaping @Sendable (HotplugEvent) -> Void) throws(HotplugError)
        -> String
    {
        try state.withLock { (state) throws(HotplugError) in
            if state.failsToStart { throw .cannotReceive }
            state.queue = queue
            state.handler = handler
        }
        return "scripted events"
    }

    func stop() {
        state.withLock { $0.handler = nil }
    }

    /// Keys appear in the list, then their events are sent.
    func plug(_ paths: String...) {
        state.withLock { $0.present += paths }
        for path in paths { send(.added(node: path)) }
    }

    func unplug(_ path: String) {
        state.withLock { $0.present.removeAll { $0 == path } }
        send(.removed(node: path))
    }

    /// Delivers `event` as a real source does: on the queue, unless stopped.
    func send(_ event: HotplugEvent) {
        guard let queue = state.withLock({ $0.queue }) else { return }
        queue.async { [state] in state.withLock { $0.handler }?(event) }
    }
}
