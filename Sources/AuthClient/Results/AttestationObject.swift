import CBOR

/// A WebAuthn attestation object (WebAuthn §6.5): the CBOR map
/// `{fmt, attStmt, authData}` a registration returns.
public struct AttestationObject: Sendable {
    /// The attestation statement format: `packed`, `none`, …
    public var format: String
    /// The raw authenticator data.
    public var authenticatorData: [UInt8]
    /// The attestation signature (`attStmt.sig`); none for format `none`.
    public var signature: [UInt8]
    /// The attestation certificate (`attStmt.x5c[0]`), where there is one;
    /// self attestation has none.
    public var certificate: [UInt8]?

    /// nil when the bytes are not an attestation object.
    public init?(_ bytes: [UInt8]) {
        guard let map = (try? CBOR.decode(bytes))?.mapValue,
              let format = map["fmt"]?.textValue,
              let authenticatorData = map["authData"]?.bytesValue,
              let statement = map["attStmt"]?.mapValue
        else { return nil }
        self.format = format
        self.authenticatorData = authenticatorData
        signature = statement["sig"]?.bytesValue ?? []
        certificate = statement["x5c"]?.arrayValue?.first?.bytesValue
    }
}
