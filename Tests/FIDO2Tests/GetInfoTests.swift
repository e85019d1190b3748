import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// getInfo as libfido2 parses it: what a host learns about the virtual key.
@Suite struct GetInfoTests {
    @Test func reportsACTAP21KeyWithItsCapabilities() throws {
        let key = try makeKey()
        let device = try key.openDevice()
        #expect(device.isFIDO2)
        #expect(device.supportsPIN && !device.hasPIN)
        #expect(device.supportsUV && !device.hasUV, "a sensor with no finger enrolled")
        #expect(device.supportsCredentialManagement)
        #expect(device.supportsCredentialProtection)
        #expect(device.supportsPermissions)
        let info = try device.info()
        #expect(info.versions == ["FIDO_2_0", "FIDO_2_1_PRE", "FIDO_2_1"])
        #expect(Set(info.extensions) == [
            "credBlob", "credProtect", "hmac-secret", "hmac-secret-mc", "largeBlobKey", "minPinLength",
        ])
        #expect(info.aaguid == VirtualKeyConfiguration.defaultAAGUID)
        #expect(info.options["rk"] == true)
        #expect(info.options["clientPin"] == false)
        #expect(info.options["uv"] == false)
        #expect(info.options["bioEnroll"] == false)
        #expect(info.options["credMgmt"] == true)
        #expect(info.options["authnrCfg"] == true)
        #expect(info.options["alwaysUv"] == false)
        // The same options, typed: absent, off and on kept apart.
        #expect(info.supports.residentKeys && info.supports.credentialManagement && info.supports.authenticatorConfig)
        #expect(info.supports.clientPIN == .off && info.supports.clientPIN.isSupported && !info.supports.clientPIN.isOn)
        #expect(info.supports.userVerification == .off && info.supports.bioEnrollment == .off)
        #expect(info.supports.alwaysUV == .off && info.supports.pinUVAuthToken)
        #expect(info.supports.setMinPINLength)
        #expect(info.algorithms == [.init(type: "public-key", cose: -7), .init(type: "public-key", cose: -8)])
        #expect(info.pinProtocols == [2, 1])
        #expect(info.transports == ["usb"])
        #expect(info.maxMessageSize == 7609)
        #expect(info.minPINLength == 4)
        #expect(info.maxCredentialBlobLength == 32)
        #expect(info.remainingDiscoverableCredentials == 25)
        #expect(info.uvModality == 2)
    }

    @Test func reflectsConfigurationAndState() throws {
        var aaguid = [UInt8](repeating: 0, count: 16)
        aaguid[15] = 9
        let key = try makeKey {
            $0.initialPIN = "123456"
            $0.aaguid = aaguid
            $0.fingerprintSensor = false
            $0.residentCredentialCapacity = 3
        }
        let device = try key.openDevice()
        #expect(device.hasPIN)
        #expect(!device.supportsUV, "no sensor: no uv option at all")
        let info = try device.info()
        #expect(info.aaguid == aaguid)
        #expect(info.options["clientPin"] == true)
        #expect(info.options["uv"] == nil)
        #expect(info.supports.clientPIN == .on && info.supports.clientPIN.isOn)
        #expect(info.supports.userVerification == .absent && !info.supports.userVerification.isSupported)
        #expect(info.supports.bioEnrollment == .absent, "no sensor: neither bioEnroll nor its preview")
        #expect(info.remainingDiscoverableCredentials == 3)
        #expect(try device.pinRetries() == 8)
        _ = try device.makeCredential(registrationRequest(residentKey: true), pin: "123456")
        #expect(try device.info().remainingDiscoverableCredentials == 2)
    }

    @Test func refusesAnInitialPINThatBreaksThePolicy() {
        #expect(throws: VirtualKeyError.self) { try makeKey { $0.initialPIN = "12" } }
    }
}
