internal import CFido2

/// The relying party a credential belongs to (WebAuthn `PublicKeyCredentialRpEntity`).
public struct RelyingParty: Codable, Hashable, Sendable {
    public var id: String
    public var name: String?

    public init(id: String, name: String? = nil) {
        self.id = id
        self.name = name
    }
}

/// The account a credential is for (WebAuthn `PublicKeyCredentialUserEntity`).
public struct UserEntity: Codable, Hashable, Sendable {
    /// The relying party's opaque user handle, at most 64 bytes.
    public var id: [UInt8]
    public var name: String?
    public var displayName: String?
    public var icon: String?

    public init(id: [UInt8], name: String? = nil, displayName: String? = nil, icon: String? = nil) {
        self.id = id
        self.name = name
        self.displayName = displayName
        self.icon = icon
    }
}

/// A three-way CTAP option: ask for it, ask against it, or leave it to the key
/// (`fido_opt_t`).
public enum OptionRequest: Sendable, Hashable {
    case keyDefault
    case disabled
    case enabled

    var cValue: fido_opt_t {
        switch self {
        case .keyDefault: return FIDO_OPT_OMIT
        case .disabled: return FIDO_OPT_FALSE
        case .enabled: return FIDO_OPT_TRUE
        }
    }
}

/// COSE signature algorithms libfido2 can ask a key for.
public enum COSEAlgorithm: Int32, Codable, Sendable {
    case es256 = -7
    case edDSA = -8
    case es384 = -35
    case rs256 = -257
}

/// The credProtect extension's levels (CTAP 2.1 §12.1).
public enum CredentialProtection: Int32, Codable, Sendable {
    case userVerificationOptional = 1
    case userVerificationOptionalWithCredentialIDList = 2
    case userVerificationRequired = 3
}

/// What a request signs: the client data itself, whose SHA-256 libfido2
/// computes, or a hash computed elsewhere.
public enum ClientData: Sendable, Hashable {
    case json([UInt8])
    case hash([UInt8])
}

/// The bits of authenticator data's flags byte (WebAuthn §6.1).
public struct AuthenticatorDataFlags: OptionSet, Codable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let userPresent = AuthenticatorDataFlags(rawValue: 0x01)
    public static let userVerified = AuthenticatorDataFlags(rawValue: 0x04)
    public static let backupEligible = AuthenticatorDataFlags(rawValue: 0x08)
    public static let backedUp = AuthenticatorDataFlags(rawValue: 0x10)
    public static let attestedCredentialData = AuthenticatorDataFlags(rawValue: 0x40)
    public static let extensionData = AuthenticatorDataFlags(rawValue: 0x80)
}

/// Strips the CBOR byte-string header libfido2 keeps around authenticator
/// data (`fido_assert_authdata_ptr` has no raw variant in 1.12).
func unwrapCBORByteString(_ wrapped: [UInt8]) -> [UInt8] {
    guard let first = wrapped.first, first >> 5 == 2 else { return wrapped }
    let headerLength: Int
    switch first & 0x1F {
    case 0..<24: headerLength = 1
    case 24: headerLength = 2
    case 25: headerLength = 3
    case 26: headerLength = 5
    case 27: headerLength = 9
    default: return wrapped
    }
    return wrapped.count >= headerLength ? Array(wrapped[headerLength...]) : wrapped
}
