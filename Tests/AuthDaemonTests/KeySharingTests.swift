import AuthClient
@testable import AuthDaemon
import AuthProtocol
import BrokerTestSupport
import Dispatch
import FIDO2
import Foundation
import Hotplug
import SystemKit
import TestSupport
import Testing
import VirtualKey

/// A key is open only while the broker uses it, and another program's use
/// of a key is waited for (authkeyd(8), SHARING KEYS WITH OTHER PROGRAMS):
/// the open and close lifecycle, `ERR_CHANNEL_BUSY` from the key, and a
/// node another process has locked. The kernel's side (hidraw, `flock`,
/// fido2-token, ssh-keygen and pam_u2f beside the daemon) is the VM test's.
@Suite(.timeLimit(.minutes(2))) struct KeySharingTests {
    /// Opened for the bring-up and closed after the linger; listing and
    /// info never open it; a request opens it and a burst keeps it open;
    /// after the linger it is closed again, and the next request reopens it.
    @Test func aKeyIsOpenOnlyWhileInUse() async throws {
        let daemon = try await InProcessBroker(["--key-linger", "2s", "--virtual-key", "name=Shared Key"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        #expect(key.worker.openState.opens == 1, "the bring-up opened it")
        #expect(await eventually { !key.worker.openState.isOpen }, "closed after the linger")

        let client = try daemon.client()
        client.setUI(ScriptedUI())
        for _ in 0..<3 {
            #expect(try await client.listAuthenticators().map(\.id) == ["v1"])
            #expect(try await client.authenticatorInfo("v1").info.versions.contains("FIDO_2_1"))
        }
        #expect(key.worker.openState == (false, 1), "listing and info read what the bring-up learnt")

        let credential = try await client.createCredential(WebAuthnFixtures.createParams())
        let credentialID = try #require(WebAuthnFixtures.credentialID(of: credential.credential))
        #expect(key.worker.openState.opens == 2, "the request opened it")
        for _ in 0..<5 {
            _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: [Base64URL.encode(credentialID)]))
        }
        #expect(key.worker.openState.opens == 2, "a burst of requests within the linger opens it once")
        #expect(await eventually { !key.worker.openState.isOpen }, "closed after the linger")
        _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: [Base64URL.encode(credentialID)]))
        #expect(key.worker.openState.opens == 3, "reopened for the next request")
    }

    /// Another program sets the key's PIN while the daemon has it closed
    /// (as `fido2-token -S` would): the daemon finds out at its next open,
    /// asks for the PIN, and lists the key as it now is.
    @Test func aPINSetByAnotherProgramIsFoundAtTheNextOpen() async throws {
        let daemon = try await InProcessBroker(["--key-linger", "0", "--virtual-key", "name=Changed Key"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        #expect(await eventually { !key.worker.openState.isOpen })
        let virtualKey = try #require(await daemon.broker.virtualKey("v1"))
        try Device.open(connection: virtualKey.connect(), name: "another program").setPIN(PIN("4321"))

        let client = try daemon.client()
        #expect(try await client.listAuthenticators().first?.pinSet == false, "not opened: not known yet")
        let ui = ScriptedUI(pins: ["4321"])
        client.setUI(ui)
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: .required))
        #expect(ui.prompts.contains("pin"))
        #expect(try await client.listAuthenticators().first?.pinSet == true)
        #expect(try await client.authenticatorInfo("v1").info.pinRetries == 8)
    }

    /// With a linger of 0 the key is closed as soon as its queue is empty.
    @Test func aLingerOfZeroClosesTheKeyAfterEachUse() async throws {
        let daemon = try await InProcessBroker(["--key-linger", "0", "--virtual-key", "name=Closing Key"])
        let key = try #require(await daemon.broker.orderedKeys.first)
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let credential = try await client.createCredential(WebAuthnFixtures.createParams())
        let credentialID = try #require(WebAuthnFixtures.credentialID(of: credential.credential))
        let before = key.worker.openState.opens
        for _ in 0..<3 {
            #expect(await eventually { !key.worker.openState.isOpen })
            _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: [Base64URL.encode(credentialID)]))
        }
        #expect(key.worker.openState.opens == before + 3)
    }

    /// A key busy with another host's transaction answers ERR_CHANNEL_BUSY:
    /// the request waits (`busy`, with no holder: the kernel cannot say
    /// whose channel), succeeds once the key is free, and the key stays listed.
    @Test func aKeyAnsweringChannelBusyIsWaitedForAndStaysListed() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Busy Key"])
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        let virtualKey = try #require(await daemon.broker.virtualKey("v1"))
        virtualKey.injectFaults([FaultRule(.channelBusy, count: 3)])
        let started = ContinuousClock.now
        let credential = try await client.createCredential(WebAuthnFixtures.createParams())
        #expect(WebAuthnFixtures.credentialID(of: credential.credential) != nil)
        #expect(ContinuousClock.now - started >= .milliseconds(250), "three busy answers, a tenth of a second apart")
        let busy = ui.statusReports.filter { $0.status == .busy }
        #expect(busy.count == 1, "told once: \(ui.statusLog)")
        #expect(busy.first?.holder == nil && busy.first?.authenticator == "v1")
        // Still v1: a key dropped and found again would have a new id.
        #expect(try await client.listAuthenticators().map(\.id) == ["v1"])
    }

    /// ERR_CHANNEL_BUSY for longer than the request may take ends it with
    /// `timeout`, and the key is still there for the next one.
    @Test func aKeyBusyForLongerThanTheRequestTimesOutAndStaysListed() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Long Busy Key"])
        let client = try daemon.client()
        client.setUI(ScriptedUI())
        let virtualKey = try #require(await daemon.broker.virtualKey("v1"))
        virtualKey.injectFaults([FaultRule(.channelBusy, count: nil)])
        var params = WebAuthnFixtures.createParams()
        params.timeout = 600
        await expectReason(.timeout) { _ = try await client.createCredential(params) }
        virtualKey.injectFaults([])
        #expect(try await client.listAuthenticators().map(\.id) == ["v1"])
        _ = try await client.createCredential(WebAuthnFixtures.createParams())
    }

    /// A key that is busy when it comes is brought up once it is free,
    /// not left out until it is plugged in again.
    @Test func aKeyBusyAtItsBringUpComesUpOnceFree() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=Busy At Start,fault=busy,fault-count=4"])
        #expect(try await daemon.client().listAuthenticators().map(\.product) == ["Busy At Start"])
    }

    /// A USB key whose node another process has locked (as libfido2 locks
    /// it for fido2-token): the request is told `busy` with that process's
    /// pid and command, waits, and succeeds once the lock is let go.
    @Test func aLockedKeyIsWaitedForAndItsHolderNamed() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd-locked-key")
        let node = directory.file("hidraw7")
        #expect(FileManager.default.createFile(atPath: node, contents: nil))
        let daemon = try await InProcessBroker([])
        let hotplug = ScriptedHotplug(present: [node])
        let virtualKey = try VirtualKey(configuration: VirtualKeyConfiguration(spec: "name=Locked Key"))
        // The "USB key": its node's lock is the real one (HIDRawConnection),
        // what answers behind it is a virtual key.
        let watcher = USBKeyWatcher(broker: daemon.broker, logger: Logger(level: .error, environment: [:]), hotplug: hotplug) {
            descriptor throws(FIDO2Error) in
            try HIDRawConnection(path: descriptor.path).close()
            return try Device.open(connection: virtualKey.connect(), name: descriptor.path)
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in watcher.start { done.resume() } }
        defer { watcher.stop() }
        let client = try daemon.client()
        let ui = ScriptedUI()
        client.setUI(ui)
        #expect(try await client.listAuthenticators().map(\.id) == ["u1"])

        // The bring-up's open ends with the linger; then the lock is free to take.
        let key = try #require(await daemon.broker.orderedKeys.first)
        #expect(await eventually { !key.worker.openState.isOpen })
        let holder = try await LockingProcess(node, for: .milliseconds(1500))
        let started = ContinuousClock.now
        _ = try await client.createCredential(WebAuthnFixtures.createParams(authenticator: "u1"))
        #expect(ContinuousClock.now - started >= .milliseconds(1000), "it waited for the lock")
        let busy = ui.statusReports.filter { $0.status == .busy }
        #expect(busy.count == 1, "\(ui.statusLog)")
        #expect(busy.first?.holder == Holder(pid: Int(holder.pid), command: "python3"))
        await holder.wait()
        withExtendedLifetime(directory) {}
    }
}

extension KeySharingTests {
    /// A USB key whose node another program holds when it is found: it is
    /// brought up once the lock is let go (not left out until the next
    /// hotplug event), and keys found with it do not wait for it.
    @Test func aUSBKeyLockedWhenFoundComesUpOnceFreeAndHoldsUpNoOther() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd-locked-at-start")
        let locked = directory.file("hidraw1"), free = directory.file("hidraw2")
        for node in [locked, free] { #expect(FileManager.default.createFile(atPath: node, contents: nil)) }
        let holder = try await LockingProcess(locked, for: .milliseconds(4000))
        let (daemon, watcher) = try await watchedLockedKeys([locked, free])
        defer { watcher.stop() }
        let client = try daemon.client()
        #expect(try await eventually(timeout: .seconds(3)) { try await client.listAuthenticators().map(\.id) == ["u2"] }, "the free key while the other is held")
        #expect(try await eventually(timeout: .seconds(10)) { try await client.listAuthenticators().map(\.id) == ["u1", "u2"] }, "the locked one once free")
        await holder.wait()
        withExtendedLifetime(directory) {}
    }

    /// A key waited for at its bring-up whose node goes meanwhile is given
    /// up at once, and never listed.
    @Test func aLockedKeyPulledOutWhileAwaitedIsGivenUp() async throws {
        let directory = TemporaryDirectory(prefix: "authkeyd-locked-and-gone")
        let node = directory.file("hidraw1")
        #expect(FileManager.default.createFile(atPath: node, contents: nil))
        let holder = try await LockingProcess(node, for: .milliseconds(2500))
        let (daemon, watcher) = try await watchedLockedKeys([node], hotplug: { hotplug in
            try? await Task.sleep(for: .milliseconds(500))
            hotplug.unplug(node)
        })
        defer { watcher.stop() }
        await holder.wait()
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await daemon.client().listAuthenticators().isEmpty)
        #expect(await daemon.broker.comingUpCount == 0)
        // Kept to the end: its files must outlive the processes using them.
        withExtendedLifetime(directory) {}
    }

    /// A broker following `nodes` as USB keys whose locks are the real ones
    /// and whose answers come from virtual keys; `hotplug` runs beside the start.
    private func watchedLockedKeys(
        _ nodes: [String], hotplug script: (@Sendable (ScriptedHotplug) async -> Void)? = nil
    ) async throws -> (InProcessBroker, USBKeyWatcher) {
        let daemon = try await InProcessBroker([])
        let hotplug = ScriptedHotplug(present: nodes)
        let watcher = USBKeyWatcher(broker: daemon.broker, logger: Logger(level: .error, environment: [:]), hotplug: hotplug) {
            descriptor throws(FIDO2Error) in
            try HIDRawConnection(path: descriptor.path).close()
            let key = try! VirtualKey(configuration: VirtualKeyConfiguration(spec: "name=USB \(descriptor.path)"))
            return try Device.open(connection: key.connect(), name: descriptor.path)
        }
        watcher.start {}
        if let script { await script(hotplug) }
        return (daemon, watcher)
    }
}

extension Broker {
    fileprivate var comingUpCount: Int { keys.comingUp.count }
}

/// A process that holds an exclusive `flock` on a file for a while: what
/// fido2-token does to a key's node while it uses it. Nothing here blocks
/// a thread of Swift's cooperative pool (the suites beside this one share
/// its two threads): it waits by sleeping between looks.
private struct LockingProcess {
    let process = Process()
    let path: String

    /// Returns once the lock is held, as /proc/locks says.
    init(_ path: String, for duration: Duration) async throws {
        self.path = path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c", "import fcntl, sys, time; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(float(sys.argv[2]))",
            path, String(Double(duration.wholeMilliseconds) / 1000),
        ]
        try process.run()
        let pid = process.processIdentifier
        guard await eventually(timeout: .seconds(10), { FileLocks.holder(ofFileAt: path)?.pid == pid }) else {
            throw InProcessBrokerError("python3 did not lock \(path)")
        }
    }

    var pid: Int32 { process.processIdentifier }

    func wait() async {
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
}

extension Broker {
    fileprivate func virtualKey(_ id: String) -> VirtualKey? { keys.virtual[id]?.key }
}
