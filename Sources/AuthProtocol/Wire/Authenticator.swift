/// How the daemon reaches a key.
public enum Transport: String, Codable, Sendable, CaseIterable {
    /// A USB key through hidraw, found by libfido2 and libudev.
    case usb
    /// An in-process virtual key.
    case virtual
    /// A key served on a SOCK_SEQPACKET socket (`--attach unix:PATH`).
    case socket
    /// The virtual key as a kernel HID device.
    case uhid
}

/// The protocol a key speaks, as `Authenticator.ctap` gives it.
public enum CTAPLevel: String, Codable, Sendable, CaseIterable {
    /// CTAP 2 (FIDO2): every method of the protocol that the key's options allow.
    case fido2
    /// CTAP1/U2F only: non-discoverable credentials with a touch, nothing
    /// else: no discoverable credentials, no user verification, no PIN, no
    /// credential management, no CTAP2 extensions.
    case u2f
}

/// A key as `authenticators.list` shows it (authkeyd-protocol(7), TYPES, Authenticator).
public struct Authenticator: Codable, Sendable, Equatable {
    /// Stable while the key stays present.
    public var id: String
    public var path: String
    public var transport: Transport
    public var manufacturer: String
    public var product: String
    public var vendorId: Int
    public var productId: Int
    /// The AAGUID in UUID form.
    public var aaguid: String
    /// A friendly name, where the user gave one.
    public var name: String?
    /// The key can have a PIN / has one.
    public var pin: Bool
    public var pinSet: Bool
    /// The key has built-in user verification (a fingerprint sensor) / has it set up.
    public var uv: Bool
    public var uvSet: Bool
    /// Discoverable credentials ("passkeys on the key").
    public var rk: Bool
    public var credMgmt: Bool
    public var bioEnroll: Bool
    public var alwaysUv: Bool
    /// `u2f` for a key that speaks only CTAP1/U2F. Optional so that a
    /// client still reads the list of a daemon from before it (nil there
    /// means `fido2`); this daemon always sends it.
    public var ctap: CTAPLevel?

    public init(
        id: String, path: String, transport: Transport, manufacturer: String, product: String, vendorId: Int,
        productId: Int, aaguid: String, name: String? = nil, pin: Bool, pinSet: Bool, uv: Bool, uvSet: Bool,
        rk: Bool, credMgmt: Bool, bioEnroll: Bool, alwaysUv: Bool, ctap: CTAPLevel? = .fido2
    ) {
        self.id = id
        self.path = path
        self.transport = transport
        self.manufacturer = manufacturer
        self.product = product
        self.vendorId = vendorId
        self.productId = productId
        self.aaguid = aaguid
        self.name = name
        self.pin = pin
        self.pinSet = pinSet
        self.uv = uv
        self.uvSet = uvSet
        self.rk = rk
        self.credMgmt = credMgmt
        self.bioEnroll = bioEnroll
        self.alwaysUv = alwaysUv
        self.ctap = ctap
    }
}

/// `authenticators.info`: the key and its full CTAP getInfo.
public struct AuthenticatorDetails: Codable, Sendable, Equatable {
    public var authenticator: Authenticator
    public var info: AuthenticatorInfoWire

    public init(authenticator: Authenticator, info: AuthenticatorInfoWire) {
        self.authenticator = authenticator
        self.info = info
    }
}

/// CTAP getInfo as the protocol carries it, with the retries read live.
public struct AuthenticatorInfoWire: Codable, Sendable, Equatable {
    public struct Algorithm: Codable, Sendable, Equatable {
        public var type: String
        public var alg: Int
        public init(type: String, alg: Int) {
            self.type = type
            self.alg = alg
        }
    }

    public var versions: [String]
    public var extensions: [String]
    public var aaguid: String
    public var options: [String: Bool]
    public var algorithms: [Algorithm]
    public var maxMsgSize: Int
    public var pinProtocols: [Int]
    public var maxCredentialCountInList: Int
    public var maxCredentialIdLength: Int
    public var transports: [String]
    public var firmwareVersion: Int
    public var minPinLength: Int
    public var forcePinChange: Bool
    public var maxCredBlobLength: Int
    public var remainingDiscoverableCredentials: Int?
    public var uvModality: Int
    public var pinRetries: Int?
    public var uvRetries: Int?

    public init(
        versions: [String], extensions: [String], aaguid: String, options: [String: Bool], algorithms: [Algorithm],
        maxMsgSize: Int, pinProtocols: [Int], maxCredentialCountInList: Int, maxCredentialIdLength: Int,
        transports: [String], firmwareVersion: Int, minPinLength: Int, forcePinChange: Bool, maxCredBlobLength: Int,
        remainingDiscoverableCredentials: Int?, uvModality: Int, pinRetries: Int?, uvRetries: Int?
    ) {
        self.versions = versions
        self.extensions = extensions
        self.aaguid = aaguid
        self.options = options
        self.algorithms = algorithms
        self.maxMsgSize = maxMsgSize
        self.pinProtocols = pinProtocols
        self.maxCredentialCountInList = maxCredentialCountInList
        self.maxCredentialIdLength = maxCredentialIdLength
        self.transports = transports
        self.firmwareVersion = firmwareVersion
        self.minPinLength = minPinLength
        self.forcePinChange = forcePinChange
        self.maxCredBlobLength = maxCredBlobLength
        self.remainingDiscoverableCredentials = remainingDiscoverableCredentials
        self.uvModality = uvModality
        self.pinRetries = pinRetries
        self.uvRetries = uvRetries
    }
}

extension Authenticator {
    /// The name a key is shown by, in the key chooser and in every prompt
    /// about it alike: the name the user gave it (`ui.describeAuthenticator`,
    /// or a registration's `friendlyName`), else its product name.
    public var displayName: String {
        guard let name, !name.isEmpty else { return product }
        return name
    }
}
