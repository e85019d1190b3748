import FIDO2
import Glibc
import SystemKit
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// The parts of the FIDO2 module that reach real hardware. These machines
/// have no hidraw, so only their failure paths can run here; the VM tier
/// drives them with a kernel HID device.
@Suite struct DeviceTests {
    @Test func manifestListsWithoutFailingWhenNoKeyIsPlugged() throws {
        let devices = try DeviceManifest.devices()
        for device in devices { #expect(device.path.hasPrefix("/dev/")) }
    }

    @Test func openingAMissingHidrawNodeFails() {
        #expect(throws: FIDO2Error.self) { try Device.open(path: "/dev/hidraw-authkeyd-missing") }
    }

    @Test func aClosedDeviceRefusesCalls() throws {
        let device = try makeKey().openDevice()
        device.close()
        #expect(throws: FIDO2Error.invalidArgument) { try device.info() }
        try device.cancel()
    }

    @Test func errorsCarryLibfido2sCodeAndName() {
        #expect(FIDO2Error.pinInvalid.code == 0x31)
        #expect(FIDO2Error.pinInvalid.name == "FIDO_ERR_PIN_INVALID")
        #expect(FIDO2Error(code: -2).name == "FIDO_ERR_RX")
        #expect(FIDO2Error(code: 0x31, function: "fido_dev_make_cred").description.hasPrefix("fido_dev_make_cred: FIDO_ERR_PIN_INVALID"))
    }
}

/// A key's hidraw node, opened and locked as libfido2 locks it: a node
/// another open file holds fails at once, as `keyLocked`, instead of
/// waiting inside libfido2.
@Suite struct HIDRawConnectionTests {
    @Test func aLockedNodeFailsAtOnceAndOpensOnceFree() throws {
        let path = "/tmp/authkeyd-hidraw-lock-\(getpid())"
        let holder = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600)
        defer { unlink(path) }
        #expect(try FileLocks.tryLockExclusive(holder))
        let clock = ContinuousClock()
        let started = clock.now
        #expect(throws: FIDO2Error.keyLocked) { try HIDRawConnection(path: path) }
        #expect(throws: FIDO2Error.keyLocked) { try Device.open(path: path) }
        #expect(clock.now - started < .milliseconds(100), "no waiting")
        FileDescriptor.close(holder)
        let connection = try HIDRawConnection(path: path)
        // While it is open, the node is locked for everyone else.
        #expect(throws: FIDO2Error.keyLocked) { try HIDRawConnection(path: path) }
        connection.close()
        try HIDRawConnection(path: path).close()
    }

    @Test func aMissingNodeIsAnInternalErrorAsLibfido2Says() {
        #expect(throws: FIDO2Error.internalError) { try HIDRawConnection(path: "/dev/hidraw-authkeyd-missing") }
    }
}
