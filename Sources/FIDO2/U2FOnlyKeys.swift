/// Keys that speak only CTAP1/U2F: their CTAPHID INIT reply has no CBOR
/// capability, so libfido2 never sends them getInfo and drives
/// `fido_dev_make_cred` / `fido_dev_get_assert` through its U2F path
/// (REGISTER and AUTHENTICATE APDUs in CTAPHID_MSG). That path is taken
/// whatever `FIDO_DISABLE_U2F_FALLBACK` says: the flag only stops a CTAP2
/// key whose getInfo failed from being treated as one (see `FIDO2Library`).
extension AuthenticatorInfo {
    /// The version string U2F keys report (U2F VERSION), and the one getInfo
    /// lists for a CTAP2 key that speaks U2F too.
    public static let u2fVersion = "U2F_V2"

    /// What a U2F-only key can do, in getInfo's terms, since it has no
    /// getInfo of its own: version `U2F_V2`; ES256 only; no options (no
    /// discoverable credentials, no PIN, no built-in user verification:
    /// each absent, which CTAP reads as "not supported"); no extensions;
    /// key handles up to 255 bytes (U2F's one-byte length); the AAGUID of
    /// zeroes that libfido2 puts in a U2F credential's authenticator data.
    public static let u2fOnly = AuthenticatorInfo(
        versions: [u2fVersion], extensions: [], transports: ["usb"], aaguid: [UInt8](repeating: 0, count: 16),
        options: [:], algorithms: [Algorithm(type: "public-key", cose: -7)], maxMessageSize: 0,
        maxCredentialCountInList: 0, maxCredentialIDLength: 255, firmwareVersion: 0, pinProtocols: [],
        maxCredentialBlobLength: 0, maxLargeBlobArray: 0, minPINLength: 0, remainingDiscoverableCredentials: nil,
        preferredPlatformUVAttempts: 0, uvModality: 0, forcePINChange: false, maxRPIDsForSetMinPINLength: 0,
        certifications: [:])

    /// The key speaks U2F only: it lists no FIDO2 version.
    public var isU2FOnly: Bool { !versions.contains { $0.hasPrefix("FIDO_2") } }
}

extension Device {
    /// The key's getInfo; for a U2F-only key (`isFIDO2` false), on which
    /// `fido_dev_get_cbor_info` can only fail, `AuthenticatorInfo.u2fOnly`.
    public func infoOrU2FProfile() throws(FIDO2Error) -> AuthenticatorInfo {
        isFIDO2 ? try info() : .u2fOnly
    }
}
