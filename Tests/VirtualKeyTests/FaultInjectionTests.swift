import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// The virtual key's injected faults, as libfido2 experiences them: each
/// fails the request it hits within the timeout, and the key then serves
/// the next request normally.
@Suite struct FaultInjectionTests {
    static let timeout: Duration = .milliseconds(1000)

    /// Registers once with `fault` in place and returns the error, if any.
    func register(with fault: Fault) throws -> (error: FIDO2Error?, elapsed: Duration, key: VirtualKey) {
        let key = try makeKey()
        let device = try key.openDevice(timeout: Self.timeout)
        key.injectFaults([FaultRule(fault)])
        let clock = ContinuousClock()
        let started = clock.now
        do {
            _ = try device.makeCredential(registrationRequest())
            return (nil, clock.now - started, key)
        } catch {
            return (error, clock.now - started, key)
        }
    }

    func expectRecovery(_ key: VirtualKey) throws {
        let device = try key.openDevice(timeout: Self.timeout)
        let credential = try device.makeCredential(registrationRequest())
        try credential.verify()
    }

    /// A reply that never comes whole: libfido2 waits out its timeout.
    @Test(arguments: [Fault.wrongChannel, .stallMidMessage])
    func lostRepliesTimeOut(fault: Fault) throws {
        let (error, elapsed, key) = try register(with: fault)
        #expect(error == .rx)
        #expect(elapsed >= Self.timeout - .milliseconds(50))
        #expect(elapsed < Self.timeout + .milliseconds(500))
        try expectRecovery(key)
    }

    /// A key busy with another host's transaction refuses the request with
    /// ERR_CHANNEL_BUSY, unprocessed: libfido2 sees a reply to the wrong
    /// command (FIDO_ERR_RX), FIDO2's device layer the key's own reason, at
    /// once; the same request then goes through, and only once.
    @Test func aBusyKeyRefusesTheRequestUntouched() throws {
        let (error, elapsed, key) = try register(with: .channelBusy)
        #expect(error == .channelBusy)
        #expect(elapsed < .milliseconds(500))
        let device = try key.openDevice(timeout: Self.timeout)
        let before = try device.info().remainingDiscoverableCredentials
        key.injectFaults([FaultRule(.channelBusy, count: 2)])
        var resident = registrationRequest()
        resident.residentKey = .enabled
        for _ in 0..<2 { #expect(throws: FIDO2Error.channelBusy) { try device.makeCredential(resident) } }
        try device.makeCredential(resident).verify()
        #expect(try device.info().remainingDiscoverableCredentials == before.map { $0 - 1 }, "made once")
    }

    /// `fault=busy` in a spec, after the replies `fault-after` lets through.
    @Test func theSpecNamesTheBusyFault() throws {
        let configuration = try VirtualKeyConfiguration(spec: "fault=busy,fault-after=1,fault-count=2")
        #expect(configuration.faultRules == [FaultRule(.channelBusy, skip: 1, count: 2)])
    }

    /// A reply with a packet missing: libfido2 sees the gap at once.
    @Test(arguments: [0, 1, 5])
    func droppedPacketsFailTheRequest(index: Int) throws {
        let (error, elapsed, key) = try register(with: .dropReport(index: index))
        #expect(error == .rx)
        #expect(elapsed < Self.timeout + .milliseconds(500))
        try expectRecovery(key)
    }

    @Test(arguments: [0, 1])
    func garbledRepliesAreRejected(index: Int) throws {
        let (error, _, key) = try register(with: .corruptReport(index: index))
        #expect(error != nil, "libfido2 must not accept a garbled registration")
        try expectRecovery(key)
    }

    @Test func aSlowReplyWithinTheTimeoutSucceeds() throws {
        let (error, elapsed, _) = try register(with: .delay(.milliseconds(200)))
        #expect(error == nil)
        #expect(elapsed >= .milliseconds(200))
    }

    @Test func aReplyLaterThanTheTimeoutFails() throws {
        let (error, _, key) = try register(with: .delay(.milliseconds(1600)))
        #expect(error == .rx)
        blockingSleep(.milliseconds(700))
        try expectRecovery(key)
    }

    @Test func aVanishingKeyIsUnpluggedUntilPluggedInAgain() throws {
        let (error, elapsed, key) = try register(with: .vanish)
        #expect(error != nil)
        #expect(elapsed < Self.timeout + .milliseconds(500))
        #expect(!key.isPluggedIn)
        #expect(throws: FIDO2Error.self) { try key.openDevice(timeout: Self.timeout) }
        key.plugIn()
        try expectRecovery(key)
    }

    @Test func faultsCanSkipRepliesAndRepeat() throws {
        let key = try makeKey()
        let device = try key.openDevice(timeout: Self.timeout)
        key.injectFaults([FaultRule(.dropReport(index: 0), skip: 1, count: 2)])
        _ = try device.makeCredential(registrationRequest())
        #expect(throws: FIDO2Error.rx) { try device.makeCredential(registrationRequest()) }
        #expect(throws: FIDO2Error.rx) { try key.openDevice(timeout: Self.timeout).makeCredential(registrationRequest()) }
        try expectRecovery(key)
    }
}
