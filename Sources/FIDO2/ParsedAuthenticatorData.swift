import CBOR

/// Authenticator data taken apart (WebAuthn §6.1): what libfido2 keeps to
/// itself, such as the extension outputs it only compares and never returns.
public struct ParsedAuthenticatorData: Sendable, Equatable {
    public var rpIDHash: [UInt8]
    public var flags: AuthenticatorDataFlags
    public var signCount: UInt32
    public var aaguid: [UInt8]?
    public var credentialID: [UInt8]?
    /// The credential public key as a COSE_Key.
    public var credentialPublicKey: CBOR?
    public var extensions: CBORMap

    /// Why authenticator data could not be read.
    public struct Malformed: Error, Sendable {}

    public init(_ bytes: [UInt8]) throws(Malformed) {
        guard bytes.count >= 37 else { throw Malformed() }
        rpIDHash = Array(bytes[0..<32])
        flags = AuthenticatorDataFlags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw Malformed() }
            aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard bytes.count >= offset + length else { throw Malformed() }
            credentialID = Array(bytes[offset..<offset + length])
            offset += length
            guard let (key, keyLength) = try? CBORDecoder().decodePrefix(bytes[offset...]) else { throw Malformed() }
            credentialPublicKey = key
            offset += keyLength
        }
        extensions = [:]
        if flags.contains(.extensionData) {
            guard let map = (try? CBOR.decode(bytes[offset...]))?.mapValue else { throw Malformed() }
            extensions = map
        } else if offset != bytes.count {
            throw Malformed()
        }
    }
}
