import AuthProtocol
import FIDO2

/// What a request asks of the key that serves it, and so which of the
/// present keys can: the one step of key choice that decides. The user is
/// never offered a key that must fail, and a request that no present key
/// can serve is refused with one reason before any key is asked.
struct KeyRequirements: Sendable {
    /// Why a key that speaks only U2F cannot serve the request
    /// (`U2FOnlyKey.refusal`); nil when it can.
    var u2fRefusal: RPCError?
    /// A registration's `largeBlob` (only `support: "required"` narrows).
    var largeBlob: LargeBlobSupport?
    /// A registration's algorithms: the key must sign with one of them.
    var algorithms: AlgorithmChoice?
    /// An authentication's allow list: the keys are asked silently which
    /// hold one of these credentials (`Operation.probe`), and only those are
    /// offered.
    var holding: (rpID: String, credentialIDs: [[UInt8]])?
    /// A listing of a key's credentials that names no key: only the keys
    /// that can list theirs (`CredentialListing.canList`).
    var listsCredentials = false

    /// The present keys that can serve, in their order; none when no key
    /// is present (the choice says `noAuthenticator`). When keys are
    /// present but none can serve, throws the reason, asking in this
    /// order: the listing of credentials, large blobs, algorithms, U2F.
    ///
    /// U2F-only keys that would refuse are left out while another key is
    /// left (a browser does not offer them either); with only such keys,
    /// the other reasons come first, as they would for any key.
    func eligible(_ present: [RegisteredKey]) throws(RPCError) -> [RegisteredKey] {
        guard !present.isEmpty else { return [] }
        var keys = U2FOnlyKey.offered(present, refusing: u2fRefusal)
        if listsCredentials {
            keys = keys.filter(CredentialListing.canList)
            guard !keys.isEmpty else { throw CredentialListing.noKeyCanList(present) }
        }
        if let largeBlob {
            keys = keys.filter(largeBlob.serves)
            guard !keys.isEmpty else { throw LargeBlobSupport.noKeyStoresLargeBlobs }
        }
        if let algorithms {
            let signing = keys.filter { algorithms.algorithm(for: $0.info) != nil }
            guard !signing.isEmpty else { throw algorithms.unsupported(by: keys) }
            keys = signing
        }
        if let u2fRefusal, keys.allSatisfy(\.info.isU2FOnly) { throw u2fRefusal }
        return keys
    }

    /// Why `key` (the one a request named, or the one chosen) cannot
    /// serve, if it cannot: algorithms, then U2F, then large blobs, then
    /// the listing of credentials.
    func check(_ key: RegisteredKey) throws(RPCError) {
        if let algorithms, algorithms.algorithm(for: key.info) == nil { throw algorithms.unsupported(by: [key]) }
        if key.info.isU2FOnly, let u2fRefusal { throw u2fRefusal }
        if let largeBlob, !largeBlob.serves(key) { throw LargeBlobSupport.refusal(of: key) }
        if listsCredentials, !CredentialListing.canList(key) { throw CredentialListing.noKeyCanList([key]) }
    }
}
