import FIDO2
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
