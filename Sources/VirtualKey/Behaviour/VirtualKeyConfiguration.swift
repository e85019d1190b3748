/// How the simulated user answers a request for presence (a touch).
public enum PresenceBehaviour: Sendable, Equatable {
    /// Touches at once.
    case immediate
    /// Touches after a delay, while the key sends "user presence needed" keepalives.
    case after(Duration)
    /// Never touches: the request ends when the host cancels or the key times out.
    case never
    /// Refuses (a key with a "no" button): CTAP2_ERR_OPERATION_DENIED.
    case denied
    /// Waits for `VirtualKey.touch()`, as a test or a demo decides.
    case manual
}

/// How the simulated fingerprint sensor matches.
public enum UserVerificationBehaviour: Sendable, Equatable {
    case match
    case noMatch
}

/// Which attestation a registration carries.
public enum AttestationMode: String, Sendable, Equatable {
    /// `packed` with x5c from the key's virtual attestation CA.
    case packed
    /// `packed` signed with the credential's own key, no x5c.
    case selfAttestation = "self"
    /// `none`: no attestation statement.
    case none
}

/// The settings of one virtual key: identity, capabilities, and how its
/// simulated user behaves.
public struct VirtualKeyConfiguration: Sendable, Equatable {
    public var productName = "authkeyd Virtual Key"
    public var manufacturer = "authkeyd"
    /// 16 bytes. The default identifies the authkeyd virtual key model.
    public var aaguid: [UInt8] = VirtualKeyConfiguration.defaultAAGUID
    public var firmwareVersion: UInt64 = 0x0001_0000
    /// CTAP 2.1, or U2F only (`ctap=u2f`).
    public var ctap: CTAPPersonality = .fido2
    public var presence: PresenceBehaviour = .immediate
    public var userVerification: UserVerificationBehaviour = .match
    /// A simulated fingerprint sensor: bio enrollment and built-in UV.
    public var fingerprintSensor = true
    /// A PIN to set when the key is created (not when loaded from a state file).
    public var initialPIN: String?
    /// The PIN attempts the key has left when it is made with `initialPIN`
    /// (`pin-retries=`): a key near the end of them, without having to
    /// spend them first.
    public var initialPINRetries: Int?
    public var residentCredentialCapacity = 25
    /// The PIN/UV auth protocols the key offers, most preferred first
    /// (getInfo `pinUvAuthProtocols`); others are refused. libfido2 uses
    /// 2 when offered, so `[1]` is how a test reaches protocol 1 through it.
    public var pinUVAuthProtocols: [Int] = [2, 1]
    /// maxSerializedLargeBlobArray in bytes: 1024, a YubiKey 5's (and
    /// CTAP 2.1's minimum). 0: no large blobs at all (no `largeBlobs`
    /// option, no largeBlobKey extension, no authenticatorLargeBlobs).
    public var largeBlobArrayLimit = 1024
    public var attestation: AttestationMode = .packed
    /// The algorithms getInfo lists and makeCredential chooses from, in
    /// this order.
    public var algorithms: [CredentialAlgorithm] = [.es256, .edDSA]
    /// How long the key waits for a touch before answering USER_ACTION_TIMEOUT.
    public var presenceTimeout: Duration = .seconds(30)
    /// How long after power-up authenticatorReset is allowed (CTAP: 10 s).
    public var resetWindow: Duration = .seconds(10)
    /// Good samples a fingerprint enrollment needs.
    public var enrollmentSamples = 4
    /// Where the key keeps its credentials across restarts; nil keeps them in memory.
    public var stateFile: String?
    /// A fault the key shows from the start (`fault=`): after `faultAfter`
    /// correct CTAP2 replies, in the next `faultCount` (nil: every one).
    /// `VirtualKey.injectFaults` changes it while the key runs.
    public var fault: Fault?
    public var faultAfter = 0
    public var faultCount: Int? = 1

    /// The fault settings as the key's injector takes them.
    public var faultRules: [FaultRule] {
        fault.map { [FaultRule($0, skip: faultAfter, count: faultCount)] } ?? []
    }

    public static let defaultAAGUID: [UInt8] = [
        0x61, 0x75, 0x74, 0x68, 0x6B, 0x65, 0x79, 0x64, 0x2D, 0x76, 0x6B, 0x65, 0x79, 0x2D, 0x30, 0x31,
    ]

    public init() {}
}
