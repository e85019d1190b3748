import CBOR
import Crypto

/// Builds authenticator data (WebAuthn §6.1): rpIdHash, flags, sign count,
/// then attested credential data and extensions when present.
struct AuthenticatorData {
    struct Flags: OptionSet {
        let rawValue: UInt8
        static let userPresent = Flags(rawValue: 0x01)
        static let userVerified = Flags(rawValue: 0x04)
        static let attestedCredentialData = Flags(rawValue: 0x40)
        static let extensionData = Flags(rawValue: 0x80)
    }

    struct AttestedCredential {
        var aaguid: [UInt8]
        var credentialID: [UInt8]
        /// The COSE_Key of the credential's public key.
        var publicKey: CBOR
    }

    var rpIDHash: [UInt8]
    var userPresent: Bool
    var userVerified: Bool
    var signCount: UInt32
    var attestedCredential: AttestedCredential?
    var extensions: CBORMap = [:]

    var bytes: [UInt8] {
        var flags: Flags = []
        if userPresent { flags.insert(.userPresent) }
        if userVerified { flags.insert(.userVerified) }
        if attestedCredential != nil { flags.insert(.attestedCredentialData) }
        if !extensions.isEmpty { flags.insert(.extensionData) }
        var out = rpIDHash
        out.append(flags.rawValue)
        out += bigEndian(signCount)
        if let credential = attestedCredential {
            out += credential.aaguid
            out += [UInt8(credential.credentialID.count >> 8), UInt8(truncatingIfNeeded: credential.credentialID.count)]
            out += credential.credentialID
            out += credential.publicKey.encoded()
        }
        if !extensions.isEmpty { out += CBOR.map(extensions).encoded() }
        return out
    }
}

func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
     UInt8(truncatingIfNeeded: value)]
}
