/// The fixed head of authenticator data (WebAuthn §6.1): the RP id hash,
/// the flags byte and the signature counter; what `authctl assert` reports.
struct AuthenticatorData {
    var flags: UInt8
    var signCount: UInt32

    /// nil when the bytes are shorter than the 37-byte head.
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 37 else { return nil }
        let start = bytes.startIndex
        flags = bytes[start + 32]
        signCount = bytes[(start + 33)..<(start + 37)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    var userPresent: Bool { flags & 0x01 != 0 }
    var userVerified: Bool { flags & 0x04 != 0 }

    /// "UP UV", "UP", or "none": the flags a user asks about.
    var flagNames: String {
        let names = [userPresent ? "UP" : nil, userVerified ? "UV" : nil].compactMap { $0 }
        return names.isEmpty ? "none" : names.joined(separator: " ")
    }
}
