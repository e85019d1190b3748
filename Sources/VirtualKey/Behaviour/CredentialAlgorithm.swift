/// A signature algorithm the virtual key makes credentials with, by its
/// COSE number (the `alg` of pubKeyCredParams and of getInfo's
/// `algorithms`).
public enum CredentialAlgorithm: Int, Sendable, Equatable, CaseIterable {
    /// ECDSA over P-256 with SHA-256.
    case es256 = -7
    /// Ed25519 (PureEdDSA).
    case edDSA = -8

    /// The name a spec's `algorithms=` setting uses.
    public var specName: String {
        switch self {
        case .es256: return "es256"
        case .edDSA: return "eddsa"
        }
    }

    public init?(specName: String) {
        guard let match = Self.allCases.first(where: { $0.specName == specName.lowercased() }) else { return nil }
        self = match
    }
}
