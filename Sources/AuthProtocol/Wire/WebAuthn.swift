/// The parameters of `credentials.create`: WebAuthn's
/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.1.4), so
/// that what a relying-party library generates goes straight in, plus
/// authkeyd's own members (authkeyd-protocol(7), Credentials).
public struct CreateParams: Codable, Sendable, Equatable {
    public struct RelyingParty: Codable, Sendable, Equatable {
        public var id: String?
        public var name: String
        public init(id: String?, name: String) {
            self.id = id
            self.name = name
        }
    }

    public struct User: Codable, Sendable, Equatable {
        public var id: Base64URLBytes
        public var name: String
        public var displayName: String
        public init(id: Base64URLBytes, name: String, displayName: String) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }

    public struct CredentialParameters: Codable, Sendable, Equatable {
        public var type: String
        public var alg: Int
        public init(type: String = "public-key", alg: Int) {
            self.type = type
            self.alg = alg
        }
    }

    public struct AuthenticatorSelection: Codable, Sendable, Equatable {
        public var authenticatorAttachment: AuthenticatorAttachment?
        public var residentKey: ResidentKeyRequirement?
        public var requireResidentKey: Bool?
        public var userVerification: UserVerificationRequirement?
        public init(
            residentKey: ResidentKeyRequirement? = nil, requireResidentKey: Bool? = nil,
            userVerification: UserVerificationRequirement? = nil
        ) {
            self.residentKey = residentKey
            self.requireResidentKey = requireResidentKey
            self.userVerification = userVerification
        }
    }

    public var rp: RelyingParty
    public var user: User
    public var challenge: Base64URLBytes?
    /// The algorithms the relying party accepts, most preferred first:
    /// the key signs with the first it has of ES256 (-7), EdDSA (-8) and
    /// RS256 (-257). Empty means WebAuthn's default, ES256 then RS256.
    public var pubKeyCredParams: [CredentialParameters]
    /// Milliseconds; a hint, capped by the daemon's request timeout.
    public var timeout: Int?
    public var excludeCredentials: [CredentialDescriptor]?
    public var authenticatorSelection: AuthenticatorSelection?
    /// Absent: `none`.
    public var attestation: AttestationConveyance?
    public var extensions: CreateExtensions?
    // authkeyd's members.
    /// The origin for clientDataJSON; default `https://<rp.id>`.
    public var origin: String?
    /// A hash computed by the caller, instead of `challenge`.
    public var clientDataHash: Base64URLBytes?
    /// A key id: skip selection.
    public var authenticator: String?

    public init(
        rp: RelyingParty, user: User, challenge: Base64URLBytes?, pubKeyCredParams: [CredentialParameters] = [.init(alg: -7)]
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
    }
}

/// `PublicKeyCredentialDescriptorJSON`.
public struct CredentialDescriptor: Codable, Sendable, Equatable {
    public var type: String
    public var id: Base64URLBytes
    public var transports: [AuthenticatorTransport]?
    public init(id: Base64URLBytes, type: String = "public-key", transports: [AuthenticatorTransport]? = nil) {
        self.type = type
        self.id = id
        self.transports = transports
    }
}

/// The registration extensions authkeyd maps to CTAP.
public struct CreateExtensions: Codable, Sendable, Equatable {
    public var credProps: Bool?
    public var hmacCreateSecret: Bool?
    /// `userVerificationOptional`, `userVerificationOptionalWithCredentialIDList`, `userVerificationRequired`.
    public var credentialProtectionPolicy: String?
    public var enforceCredentialProtectionPolicy: Bool?
    public var credBlob: Base64URLBytes?
    public var minPinLength: Bool?
    /// WebAuthn PRF: asks the key for hmac-secret; answered with `prf.enabled`.
    public var prf: PRFInputs?
    /// WebAuthn's largeBlob: `{support: "required" | "preferred"}`.
    public var largeBlob: LargeBlobInputs?
    public init() {}
}

/// The parameters of `credentials.get`: `PublicKeyCredentialRequestOptionsJSON`
/// plus authkeyd's members.
public struct GetParams: Codable, Sendable, Equatable {
    public var challenge: Base64URLBytes?
    public var timeout: Int?
    public var rpId: String?
    public var allowCredentials: [CredentialDescriptor]?
    public var userVerification: UserVerificationRequirement?
    public var extensions: GetExtensions?
    // authkeyd's members.
    public var origin: String?
    public var clientDataHash: Base64URLBytes?
    public var authenticator: String?
    /// Details the user confirms before the key is touched; written into
    /// clientDataJSON so the signature commits to them.
    public var transaction: Transaction?
    /// false: the key signs without a touch (CTAP `up=false`) and the
    /// authenticator data's UP flag is 0, as OpenSSH asks for keys made
    /// with `no-touch-required`. Absent or true: a touch, as WebAuthn has it.
    public var userPresence: Bool?
    /// The user name the request is for, when the caller acts for someone
    /// else (the PAM module inside sudo, as root, for the user it
    /// authenticates): their policy, registrations and session agent
    /// apply. Only root and authkeyd's admins may give it.
    public var onBehalfOf: String?

    public init(challenge: Base64URLBytes?, rpId: String?) {
        self.challenge = challenge
        self.rpId = rpId
    }
}

public struct GetExtensions: Codable, Sendable, Equatable {
    public var getCredBlob: Bool?
    /// WebAuthn PRF: answered with `prf.results`. Not with `hmacGetSecret`.
    public var prf: PRFInputs?
    /// Raw hmac-secret salts: answered with `hmacGetSecret.{output1, output2}`.
    public var hmacGetSecret: HMACGetSecretInput?
    /// WebAuthn's largeBlob: `{read: true}` or `{write: <base64url>}`.
    public var largeBlob: LargeBlobInputs?
    public init() {}
}

/// WebAuthn's `AuthenticationExtensionsLargeBlobInputs`: `support` at
/// registration; `read` or `write` (not both) at authentication.
public struct LargeBlobInputs: Codable, Sendable, Equatable {
    /// `required` or `preferred`.
    public var support: String?
    public var read: Bool?
    public var write: Base64URLBytes?
    public init(support: String? = nil, read: Bool? = nil, write: Base64URLBytes? = nil) {
        self.support = support
        self.read = read
        self.write = write
    }
}

/// `{details: {label: value}}`; the order of the labels is kept.
public struct Transaction: Codable, Sendable, Equatable {
    public var details: JSONObject

    public init(details: JSONObject) { self.details = details }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let value = try container.decode(JSONValue.self, forKey: .details)
        guard case .object(let object) = value, object.allSatisfy({ $0.value.stringValue != nil }) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: container.codingPath + [Keys.details], debugDescription: "expected an object of label: text"))
        }
        details = object
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(JSONValue.object(details), forKey: .details)
    }

    enum Keys: String, CodingKey { case details }
}

/// The results of `credentials.create` and `credentials.get`.
public struct CredentialResult: Codable, Sendable, Equatable {
    /// WebAuthn `PublicKeyCredential` JSON (the Level 3 `toJSON()` shape).
    public var credential: JSONValue
    /// The daemon's record of the registration, when it has one.
    public var registration: Registration?
    /// The SHA-256 of the client data the key signed: what a CTAP-level
    /// verifier (fido2-tools) takes, so that a client needs no digest code
    /// (and `authctl` no libcrypto) to hand the result on. Always sent;
    /// optional so that a client newer than the daemon still reads the
    /// rest of a result from a daemon that does not send it yet.
    public var clientDataHash: Base64URLBytes?

    public init(credential: JSONValue, registration: Registration?, clientDataHash: Base64URLBytes?) {
        self.credential = credential
        self.registration = registration
        self.clientDataHash = clientDataHash
    }
}

/// The daemon's record of a registration, kept per user.
public struct Registration: Codable, Sendable, Equatable {
    /// The credential id, base64url: the record's id too.
    public var id: String
    public var rpId: String
    public var rpName: String?
    public var user: CreateParams.User
    public var aaguid: String
    /// The key's product name when it was registered.
    public var authenticatorProduct: String
    public var transport: Transport
    /// What the user called the key (ui.describeAuthenticator).
    public var friendlyName: String?
    public var residentKey: Bool
    /// Seconds since the epoch.
    public var createdAt: Int64
    public var lastUsedAt: Int64?
    public var signCount: UInt32
    /// The credential key's COSE algorithm: -7 ES256, -8 EdDSA, -257 RS256.
    /// Absent in records made before authkeyd negotiated algorithms, which
    /// are all ES256.
    public var publicKeyAlgorithm: Int?

    public init(
        id: String, rpId: String, rpName: String?, user: CreateParams.User, aaguid: String, authenticatorProduct: String,
        transport: Transport, friendlyName: String?, residentKey: Bool, createdAt: Int64, lastUsedAt: Int64?,
        signCount: UInt32, publicKeyAlgorithm: Int? = nil
    ) {
        self.id = id
        self.rpId = rpId
        self.rpName = rpName
        self.user = user
        self.aaguid = aaguid
        self.authenticatorProduct = authenticatorProduct
        self.transport = transport
        self.friendlyName = friendlyName
        self.residentKey = residentKey
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.signCount = signCount
        self.publicKeyAlgorithm = publicKeyAlgorithm
    }
}

/// `registrations.list` → `{registrations}`; `.rename` `{id, friendlyName}`; `.delete` `{id}`.
public struct RegistrationList: Codable, Sendable, Equatable {
    public var registrations: [Registration]
    public init(registrations: [Registration]) { self.registrations = registrations }
}

public struct RenameRegistrationParams: Codable, Sendable, Equatable {
    public var id: String
    public var friendlyName: String
    public init(id: String, friendlyName: String) {
        self.id = id
        self.friendlyName = friendlyName
    }
}

public struct RegistrationIDParams: Codable, Sendable, Equatable {
    public var id: String
    public init(id: String) { self.id = id }
}
