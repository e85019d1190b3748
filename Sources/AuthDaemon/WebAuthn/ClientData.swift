import AuthProtocol
import Crypto

/// What is signed: WebAuthn's `CollectedClientData` (§5.8.1), built by the
/// daemon when the caller gives a challenge, or a hash the caller built.
struct ClientDataInput {
    /// The JSON text, when the daemon builds it.
    let json: [UInt8]?
    let hash: [UInt8]

    /// `type`, `challenge`, `origin`, `crossOrigin` in that order (as
    /// browsers serialise them), then the confirmed transaction, if any:
    /// the signature covers exactly the details the user saw.
    static func build(type: String, challenge: [UInt8], origin: String, transaction: Transaction?) -> ClientDataInput {
        var object: JSONObject = [
            "type": .string(type), "challenge": .string(Base64URL.encode(challenge)), "origin": .string(origin),
            "crossOrigin": false,
        ]
        if let transaction { object["transaction"] = ["details": .object(transaction.details)] }
        let json = JSONValue.object(object).serialized()
        return ClientDataInput(json: json, hash: SHA256.hash(json))
    }

    /// The client data from a request's `challenge` or `clientDataHash`.
    static func from(
        type: String, challenge: Base64URLBytes?, clientDataHash: Base64URLBytes?, origin: String, transaction: Transaction?
    ) throws(RPCError) -> ClientDataInput {
        switch (challenge, clientDataHash) {
        case (let challenge?, nil):
            guard challenge.bytes.count >= 16 else { throw RPCError(.invalidParams, "invalid params: challenge: at least 16 bytes") }
            return build(type: type, challenge: challenge.bytes, origin: origin, transaction: transaction)
        case (nil, let hash?):
            guard hash.bytes.count == 32 else { throw RPCError(.invalidParams, "invalid params: clientDataHash: 32 bytes (SHA-256)") }
            guard transaction == nil else {
                throw RPCError(.invalidParams, "invalid params: a transaction needs challenge, not clientDataHash: the daemon writes it into clientDataJSON")
            }
            return ClientDataInput(json: nil, hash: hash.bytes)
        case (nil, nil):
            throw RPCError(.invalidParams, "invalid params: challenge is required (or clientDataHash)")
        case (.some, .some):
            throw RPCError(.invalidParams, "invalid params: give challenge or clientDataHash, not both")
        }
    }
}

/// The relying party id a request may use with its origin (WebAuthn §5.1.4.1
/// steps 7–8): for web origins, the origin's host or a domain above it.
/// Other schemes (`ssh:`, app origins) are taken as given.
enum OriginCheck {
    static func resolve(rpID: String?, origin: String?) throws(RPCError) -> (rpID: String, origin: String) {
        guard let origin else {
            guard let rpID, !rpID.isEmpty else { throw RPCError(.invalidParams, "invalid params: rp.id (or rpId) or origin is required") }
            return (rpID, "https://\(rpID)")
        }
        guard let host = webHost(of: origin) else {
            guard let rpID, !rpID.isEmpty else { throw RPCError(.invalidParams, "invalid params: rp.id is required with origin \(origin)") }
            return (rpID, origin)
        }
        let id = rpID ?? host
        guard host == id || host.hasSuffix("." + id), !id.isEmpty, id.contains(".") || id == "localhost" else {
            throw RPCError(.invalidParams, "invalid params: rp id \"\(id)\" is not the origin's host \(host) or a domain above it")
        }
        return (id, origin)
    }

    /// The host of an `https://` origin (or `http://localhost`), lower-cased.
    static func webHost(of origin: String) -> String? {
        let scheme: String
        if origin.hasPrefix("https://") { scheme = "https://" } else if origin.hasPrefix("http://") { scheme = "http://" } else { return nil }
        var rest = origin.dropFirst(scheme.count)
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let colon = rest.lastIndex(of: ":") { rest = rest[..<colon] }
        return rest.isEmpty ? nil : rest.lowercased()
    }
}
