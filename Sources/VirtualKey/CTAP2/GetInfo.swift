import CBOR

extension Authenticator {
    static let maxMessageSize = CTAPHID.maxMessageSize
    static let maxCredentialCountInList = 8
    static let maxCredentialIDLength = 128
    static let maxCredentialBlobLength = 32
    static let maxRPIDsForSetMinPINLength = 4
    static let preferredPlatformUVAttempts = 3
    /// uvModality: USER_VERIFY_FINGERPRINT_INTERNAL.
    static let uvModalityFingerprint = 0x02

    /// authenticatorGetInfo (CTAP 2.1 §6.4). Options that can be configured
    /// but are not (no PIN yet, no finger enrolled) are reported false;
    /// absent means unsupported.
    func getInfo() -> CBORMap {
        var options: CBORMap = [
            "rk": true, "up": true, "plat": false,
            "clientPin": .bool(state.isPINSet),
            "pinUvAuthToken": true,
            "credMgmt": true, "credentialMgmtPreview": true,
            "authnrCfg": true, "setMinPINLength": true,
            "alwaysUv": .bool(state.alwaysUV),
            "makeCredUvNotRqd": .bool(!state.alwaysUV),
        ]
        if configuration.fingerprintSensor {
            let enrolled = !state.enrollments.isEmpty
            options["uv"] = .bool(enrolled)
            options["bioEnroll"] = .bool(enrolled)
            options["userVerificationMgmtPreview"] = .bool(enrolled)
        }
        var info: CBORMap = [
            0x01: ["FIDO_2_0", "FIDO_2_1_PRE", "FIDO_2_1"],
            0x02: ["credBlob", "credProtect", "hmac-secret", "hmac-secret-mc", "minPinLength"],
            0x03: .bytes(configuration.aaguid),
            0x04: .map(options),
            0x05: .int(Self.maxMessageSize),
            0x06: .array(configuration.pinUVAuthProtocols.map { .int($0) }),
            0x07: .int(Self.maxCredentialCountInList),
            0x08: .int(Self.maxCredentialIDLength),
            0x09: ["usb"],
            0x0A: .array(configuration.algorithms.map { .map(["alg": .int($0.rawValue), "type": "public-key"]) }),
            0x0C: .bool(state.forcePINChange),
            0x0D: .int(state.minPINLength),
            0x0E: .unsigned(configuration.firmwareVersion),
            0x0F: .int(Self.maxCredentialBlobLength),
            0x10: .int(Self.maxRPIDsForSetMinPINLength),
            0x14: .int(max(0, configuration.residentCredentialCapacity - state.residentCredentials.count)),
        ]
        if configuration.fingerprintSensor {
            info[0x11] = .int(Self.preferredPlatformUVAttempts)
            info[0x12] = .int(Self.uvModalityFingerprint)
        }
        addLargeBlobsInfo(to: &info)
        return info
    }
}
