import CBOR

/// Authenticator data (WebAuthn §6.1): the RP id hash, the flags byte, the
/// signature counter and, after a registration, the attested credential
/// data; what `authctl assert` reports and the OpenSSH provider hands on.
public struct AuthenticatorData: Sendable {
    public var flags: UInt8
    public var signCount: UInt32
    /// The credential a registration made (flag AT), else nil.
    public var attestedCredential: AttestedCredential?

    /// WebAuthn §6.5.1: the key's model, the credential id and its public key.
    public struct AttestedCredential: Sendable {
        public var aaguid: [UInt8]
        public var credentialID: [UInt8]
        /// The credential public key, a COSE_Key.
        public var publicKey: CBOR
    }

    /// nil when the bytes are shorter than the 37-byte head, or when flag AT
    /// is set and the attested credential data that must follow is not there.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= 37 else { return nil }
        let bytes = Array(bytes)
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard flags & Self.attestedCredentialDataFlag != 0 else { return }
        // aaguid (16) ‖ credentialIdLength (2, big-endian) ‖ credentialId ‖ COSE_Key (CBOR, then any extensions).
        guard bytes.count >= 37 + 18 else { return nil }
        let idLength = Int(bytes[53]) << 8 | Int(bytes[54])
        let keyStart = 55 + idLength
        guard bytes.count > keyStart, let key = try? CBORDecoder().decodePrefix(bytes[keyStart...]) else { return nil }
        attestedCredential = AttestedCredential(
            aaguid: Array(bytes[37..<53]), credentialID: Array(bytes[55..<keyStart]), publicKey: key.item)
    }

    static let attestedCredentialDataFlag: UInt8 = 0x40

    public var userPresent: Bool { flags & 0x01 != 0 }
    public var userVerified: Bool { flags & 0x04 != 0 }

    /// "UP UV", "UP", or "none": the flags a user asks about.
    public var flagNames: String {
        let names = [userPresent ? "UP" : nil, userVerified ? "UV" : nil].compactMap { $0 }
        return names.isEmpty ? "none" : names.joined(separator: " ")
    }
}
