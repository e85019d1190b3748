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
        let daemon = try await InProcessBroker(["--key-linger", "300ms", "--virtual-key", "name=Shared Key"])
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
        _ = try await client.createCredential(WebAuthnFixtures.createParams(residentKey: "required"))
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
        let holder = try LockingProcess(node, for: .milliseconds(1500))
        let started = ContinuousClock.now
        _ = try await client.createCredential(WebAuthnFixtures.createParams(authenticator: "u1"))
        #expect(ContinuousClock.now - started >= .milliseconds(1000), "it waited for the lock")
        let busy = ui.statusReports.filter { $0.status == .busy }
        #expect(busy.count == 1, "\(ui.statusLog)")
        #expect(busy.first?.holder == Holder(pid: Int(holder.pid), command: "python3"))
        holder.wait()
    }
}

/// A process that holds an exclusive `flock` on a file for a while: what
/// fido2-token does to a key's node while it uses it.
private struct LockingProcess {
    let process = Process()

    /// Returns once the lock is held.
    init(_ path: String, for duration: Duration) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(float(sys.argv[2]))",
            path, String(Double(duration.wholeMilliseconds) / 1000),
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = output.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("locked") else { throw InProcessBrokerError("python3 did not lock \(path)") }
    }

    var pid: Int32 { process.processIdentifier }
    func wait() { process.waitUntilExit() }
}

extension Broker {
    fileprivate func virtualKey(_ id: String) -> VirtualKey? { virtualKeys[id]?.key }
}
