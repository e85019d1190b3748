/// The key types OpenSSH asks for, by its numbers (`SSH_SK_ECDSA`,
/// `SSH_SK_ED25519`), and the COSE algorithm each is on a FIDO2 key.
public enum SSHKeyAlgorithm: UInt32, Sendable, CaseIterable {
    /// `ecdsa-sk`: ES256 (P-256, SHA-256).
    case ecdsaP256 = 0
    /// `ed25519-sk`: EdDSA over Ed25519.
    case ed25519 = 1

    public var coseAlgorithm: Int {
        switch self {
        case .ecdsaP256: return -7
        case .ed25519: return -8
        }
    }

    /// The inverse of `coseAlgorithm`, so that the mapping is written once.
    public init?(coseAlgorithm: Int) {
        guard let match = Self.allCases.first(where: { $0.coseAlgorithm == coseAlgorithm }) else { return nil }
        self = match
    }
}

/// The flags OpenSSH passes to enroll and sign (`SSH_SK_*`).
public struct SSHKeyFlags: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `SSH_SK_USER_PRESENCE_REQD`: the key must be touched.
    public static let userPresence = SSHKeyFlags(rawValue: 0x01)
    /// `SSH_SK_USER_VERIFICATION_REQD`: PIN or built-in verification (`-O verify-required`).
    public static let userVerification = SSHKeyFlags(rawValue: 0x04)
    /// `SSH_SK_FORCE_OPERATION`: enroll over an existing resident key.
    public static let force = SSHKeyFlags(rawValue: 0x10)
    /// `SSH_SK_RESIDENT_KEY`: a discoverable credential (`-O resident`).
    public static let resident = SSHKeyFlags(rawValue: 0x20)
}
