/// WebAuthn's enumerations as the wire carries them.
///
/// WebAuthn declares the members that hold these as `DOMString`, not as
/// the enumeration, so that a value a later version adds still reaches a
/// client that does not know it, and a client ignores a value it does not
/// know (WebAuthn Level 3 §2.1.1, "Enumerations as DOMString types"). So
/// here too: an unknown value in a member decodes as absent (the member's
/// default applies), and an unknown element of a list is left out. The
/// overloads below give every wire type that leniency through its
/// synthesized `Codable`; encoding writes the raw value.
public protocol WebAuthnEnumeration: RawRepresentable, Codable, Hashable, Sendable, CaseIterable where RawValue == String {}

/// `UserVerificationRequirement`: whether the authenticator verifies the
/// user (PIN or fingerprint). Absent means `preferred`.
public enum UserVerificationRequirement: String, WebAuthnEnumeration {
    case required
    case preferred
    case discouraged
}

/// `ResidentKeyRequirement`: whether the credential is discoverable.
/// Absent means what `requireResidentKey` says (`discouraged` without it).
public enum ResidentKeyRequirement: String, WebAuthnEnumeration {
    case required
    case preferred
    case discouraged
}

/// `AttestationConveyancePreference`: whether the relying party gets the
/// authenticator's attestation statement. Absent means `none`.
public enum AttestationConveyance: String, WebAuthnEnumeration {
    case none
    case indirect
    case direct
    case enterprise
}

/// `AuthenticatorTransport`: how a client reaches an authenticator.
public enum AuthenticatorTransport: String, WebAuthnEnumeration {
    case usb
    case nfc
    case ble
    case smartCard = "smart-card"
    case hybrid
    case `internal`
}

/// `AuthenticatorAttachment`: a platform authenticator (built into the
/// machine) or a roaming one (a security key).
public enum AuthenticatorAttachment: String, WebAuthnEnumeration {
    case platform
    case crossPlatform = "cross-platform"
}

extension KeyedDecodingContainer {
    /// An optional member: an unknown value is absent. (Picked over the
    /// standard library's generic overload by every synthesized decoder
    /// in this module, being the more specific.)
    public func decodeIfPresent<Value: WebAuthnEnumeration>(_ type: Value.Type, forKey key: Key) throws -> Value? {
        try decodeIfPresent(String.self, forKey: key).flatMap(Value.init(rawValue:))
    }

    /// An optional list: unknown elements are left out.
    public func decodeIfPresent<Value: WebAuthnEnumeration>(_ type: [Value].Type, forKey key: Key) throws -> [Value]? {
        try decodeIfPresent([String].self, forKey: key).map { $0.compactMap(Value.init(rawValue:)) }
    }
}
