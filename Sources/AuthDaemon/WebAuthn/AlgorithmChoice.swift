import AuthProtocol
import FIDO2

/// The credential algorithm of a `credentials.create`: the relying party's
/// `pubKeyCredParams` in its order of preference, against the algorithms a
/// key lists in getInfo, as a browser's WebAuthn client and CTAP 2.1 §6.1
/// step 3 choose. libfido2 sends a key one algorithm, so the daemon makes
/// the choice before asking.
struct AlgorithmChoice: Sendable {
    /// The relying party's `public-key` algorithms, most preferred first.
    let offered: [Int]

    /// What authkeyd can ask a key for through libfido2 and describe in the
    /// result (`publicKey`, `publicKeyAlgorithm`).
    static let servable: [COSEAlgorithm] = [.es256, .edDSA, .rs256]
    /// WebAuthn §5.1.3 step 10: an empty `pubKeyCredParams` means ES256,
    /// then RS256.
    static let webAuthnDefault = [-7, -257]

    /// Refuses, before any key is asked, a list with nothing authkeyd can
    /// serve.
    init(_ parameters: [CreateParams.CredentialParameters]) throws(RPCError) {
        offered = parameters.isEmpty ? Self.webAuthnDefault : parameters.filter { $0.type == "public-key" }.map(\.alg)
        guard offered.contains(where: { Self.servable.map(\.rawValue).contains(Int32(clamping: $0)) }) else {
            let kinds = parameters.isEmpty ? "" : " (entries of type public-key)"
            throw RPCError(
                .unsupported,
                "pubKeyCredParams offers \(Self.describe(offered))\(kinds); authkeyd asks keys for \(Self.describe(Self.servable.map { Int($0.rawValue) })): offer one of them")
        }
    }

    /// The algorithms a key lists. A key that lists none (a CTAP 2.0 key
    /// without getInfo's `algorithms`, a U2F key) signs with ES256, the
    /// one algorithm every FIDO key has.
    static func listed(by info: AuthenticatorInfo) -> [Int] {
        let listed = info.algorithms.filter { $0.type == "public-key" }.map(\.cose)
        return listed.isEmpty ? [-7] : listed
    }

    /// The first offered algorithm the key lists and authkeyd serves; nil
    /// when the key has none of them.
    func algorithm(for info: AuthenticatorInfo) -> COSEAlgorithm? {
        let listed = Self.listed(by: info)
        for alg in offered where listed.contains(alg) {
            if let algorithm = COSEAlgorithm(rawValue: Int32(clamping: alg)), Self.servable.contains(algorithm) {
                return algorithm
            }
        }
        return nil
    }

    /// `unsupported`, naming what was offered and what each key has.
    func unsupported(by keys: [RegisteredKey]) -> RPCError {
        let holdings = keys.map { "\($0.id) \"\($0.product)\" has \(Self.describe(Self.listed(by: $0.info)))" }
        return RPCError(
            .unsupported,
            "pubKeyCredParams offers \(Self.describe(offered)), which no key present signs with: \(holdings.joined(separator: "; ")); offer one of those, or use a key that has an offered algorithm")
    }

    /// `EdDSA (-8), ES256 (-7)`: names with the COSE numbers.
    static func describe(_ algorithms: [Int]) -> String {
        let names = algorithms.map { alg -> String in
            switch alg {
            case -7: return "ES256 (-7)"
            case -8: return "EdDSA (-8)"
            case -35: return "ES384 (-35)"
            case -257: return "RS256 (-257)"
            default: return "\(alg)"
            }
        }
        return names.isEmpty ? "no algorithm" : names.joined(separator: ", ")
    }
}

extension MakeCredentialRequest {
    /// The request with the credential algorithm chosen for the key.
    func signing(with algorithm: COSEAlgorithm) -> MakeCredentialRequest {
        var request = self
        request.algorithm = algorithm
        return request
    }
}
