/// The key-management methods (PIN, reset, on-key credentials, fingerprints,
/// config): all under `authenticators.*`, all for admins only but the
/// listing of the key's credentials, all taking PINs through `ui.enterPin`
/// and never as parameters.
public enum ManagementMethod {
    public static let setPin = ClientMethod.setPin.rawValue
    public static let changePin = ClientMethod.changePin.rawValue
    public static let pinRetries = ClientMethod.pinRetries.rawValue
    public static let reset = ClientMethod.reset.rawValue
    public static let listCredentials = ClientMethod.listCredentials.rawValue
    public static let deleteCredential = ClientMethod.deleteCredential.rawValue
    public static let updateCredentialUser = ClientMethod.updateCredentialUser.rawValue
    public static let fingerprintSensor = ClientMethod.fingerprintSensor.rawValue
    public static let enrollFingerprint = ClientMethod.enrollFingerprint.rawValue
    public static let listFingerprints = ClientMethod.listFingerprints.rawValue
    public static let renameFingerprint = ClientMethod.renameFingerprint.rawValue
    public static let deleteFingerprint = ClientMethod.deleteFingerprint.rawValue
    public static let setAlwaysUv = ClientMethod.setAlwaysUv.rawValue
    public static let setMinPinLength = ClientMethod.setMinPinLength.rawValue

    public static let all = ClientMethod.allCases.filter(\.isManagement).map(\.rawValue)
}

/// `authenticators.pinRetries` → attempts left.
public struct RetriesResult: Codable, Sendable, Equatable {
    public var pinRetries: Int?
    public var uvRetries: Int?
    public init(pinRetries: Int?, uvRetries: Int?) {
        self.pinRetries = pinRetries
        self.uvRetries = uvRetries
    }
}

/// `authenticators.reset`: `confirm` must be the key's product name, typed
/// by the user: a reset erases every credential on the key.
public struct ResetParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public var confirm: String
    public init(authenticator: String, confirm: String) {
        self.authenticator = authenticator
        self.confirm = confirm
    }
}

/// `authenticators.credentials.list`: `{authenticator?, rpId?}`. Without
/// `authenticator`, the daemon lists the one key that can (credential
/// management and a PIN set), or the one the user picks among those.
public struct ListCredentialsParams: Codable, Sendable, Equatable {
    public var authenticator: String?
    public var rpId: String?
    public init(authenticator: String?, rpId: String? = nil) {
        self.authenticator = authenticator
        self.rpId = rpId
    }
}

/// The discoverable credentials on a key, grouped by relying party, with
/// the caller's own registration records where the daemon has them.
public struct StoredCredentials: Codable, Sendable, Equatable {
    public struct RelyingParty: Codable, Sendable, Equatable {
        public var id: String
        public var name: String?
        public var credentials: [Credential]
        public init(id: String, name: String?, credentials: [Credential]) {
            self.id = id
            self.name = name
            self.credentials = credentials
        }
    }

    public struct Credential: Codable, Sendable, Equatable {
        public var credentialId: String
        public var user: User
        /// 1 userVerificationOptional, 2 …OptionalWithCredentialIDList, 3 userVerificationRequired.
        public var credProtect: Int?
        public var registration: Registration?
        /// The credential's public key as a COSE_Key (CBOR), as the
        /// registration's attestedCredentialData holds it; nil when the key
        /// did not report one the daemon can encode.
        public var publicKey: Base64URLBytes?
        /// Its COSE algorithm: -7 ES256, -8 EdDSA, -257 RS256.
        public var publicKeyAlgorithm: Int?
        public init(
            credentialId: String, user: User, credProtect: Int?, registration: Registration?,
            publicKey: Base64URLBytes? = nil, publicKeyAlgorithm: Int? = nil
        ) {
            self.credentialId = credentialId
            self.user = user
            self.credProtect = credProtect
            self.registration = registration
            self.publicKey = publicKey
            self.publicKeyAlgorithm = publicKeyAlgorithm
        }
    }

    public struct User: Codable, Sendable, Equatable {
        public var id: Base64URLBytes
        public var name: String?
        public var displayName: String?
        public init(id: Base64URLBytes, name: String?, displayName: String?) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }

    public var existing: Int
    public var remaining: Int
    public var relyingParties: [RelyingParty]
    /// The key listed: the one named, or the one the daemon chose. Optional
    /// so that a client still reads a daemon from before it.
    public var authenticator: Authenticator?

    public init(existing: Int, remaining: Int, relyingParties: [RelyingParty], authenticator: Authenticator? = nil) {
        self.existing = existing
        self.remaining = remaining
        self.relyingParties = relyingParties
        self.authenticator = authenticator
    }
}

/// `authenticators.credentials.delete`: `{authenticator, credentialId}`.
public struct CredentialParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public var credentialId: String
    public init(authenticator: String, credentialId: String) {
        self.authenticator = authenticator
        self.credentialId = credentialId
    }
}

/// `authenticators.credentials.updateUser`: the user id must stay the same.
public struct UpdateUserParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public var credentialId: String
    public var user: StoredCredentials.User
    public init(authenticator: String, credentialId: String, user: StoredCredentials.User) {
        self.authenticator = authenticator
        self.credentialId = credentialId
        self.user = user
    }
}

/// `authenticators.fingerprints.info` → the sensor.
public struct FingerprintSensor: Codable, Sendable, Equatable {
    /// 1 a touch sensor, 2 a swipe sensor.
    public var kind: Int
    public var samplesRequired: Int
    public init(kind: Int, samplesRequired: Int) {
        self.kind = kind
        self.samplesRequired = samplesRequired
    }
}

public struct Fingerprint: Codable, Sendable, Equatable {
    public var templateId: String
    public var name: String?
    public init(templateId: String, name: String?) {
        self.templateId = templateId
        self.name = name
    }
}

public struct FingerprintList: Codable, Sendable, Equatable {
    public var fingerprints: [Fingerprint]
    public init(fingerprints: [Fingerprint]) { self.fingerprints = fingerprints }
}

/// `authenticators.fingerprints.enroll`: `{authenticator, name?}`.
public struct EnrollParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public var name: String?
    public init(authenticator: String, name: String? = nil) {
        self.authenticator = authenticator
        self.name = name
    }
}

/// `.rename` `{authenticator, templateId, name}`; `.delete` `{authenticator, templateId}`.
public struct FingerprintParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public var templateId: String
    public var name: String?
    public init(authenticator: String, templateId: String, name: String? = nil) {
        self.authenticator = authenticator
        self.templateId = templateId
        self.name = name
    }
}

/// `authenticators.config.setAlwaysUv`.
public struct AlwaysUvParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public var enabled: Bool
    public init(authenticator: String, enabled: Bool) {
        self.authenticator = authenticator
        self.enabled = enabled
    }
}

/// `authenticators.config.setMinPinLength`: the length can only grow; the
/// relying parties named may read it (minPinLength extension);
/// `forceChange` makes the key demand a new PIN.
public struct MinPinLengthParams: Codable, Sendable, Equatable {
    public var authenticator: String
    public var length: Int?
    public var rpIds: [String]?
    public var forceChange: Bool?
    public init(authenticator: String, length: Int?, rpIds: [String]? = nil, forceChange: Bool? = nil) {
        self.authenticator = authenticator
        self.length = length
        self.rpIds = rpIds
        self.forceChange = forceChange
    }
}
