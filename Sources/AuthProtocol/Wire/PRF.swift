/// The WebAuthn `prf` extension (WebAuthn Level 3 §10.1.4) and authkeyd's
/// `hmacGetSecret`: the two faces of CTAP's hmac-secret.
///
/// Every output is a secret derived from the credential: a disk key, an
/// `age` identity. The daemon never logs one and zeroes its copies once
/// the reply is sent; a client should treat them the same way.

/// `AuthenticationExtensionsPRFValues`: one or two inputs, or the outputs
/// for them. Inputs are any bytes (the daemon hashes them into salts, as
/// browsers do); outputs are 32 bytes each.
public struct PRFValues: Codable, Sendable, Equatable {
    public var first: Base64URLBytes
    public var second: Base64URLBytes?
    public init(first: [UInt8], second: [UInt8]? = nil) {
        self.first = Base64URLBytes(first)
        self.second = second.map(Base64URLBytes.init)
    }
}

/// `AuthenticationExtensionsPRFInputs`: `prf` in `credentials.create`
/// (`{}` asks the key for hmac-secret; `eval` is accepted and not
/// evaluated at registration) and in `credentials.get` (`eval`, and
/// `evalByCredential` keyed by base64url credential id, which takes
/// precedence for the credential the key uses and needs an allow list
/// naming every id it holds).
public struct PRFInputs: Codable, Sendable, Equatable {
    public var eval: PRFValues?
    public var evalByCredential: [String: PRFValues]?
    public init(eval: PRFValues? = nil, evalByCredential: [String: PRFValues]? = nil) {
        self.eval = eval
        self.evalByCredential = evalByCredential
    }
}

/// `AuthenticationExtensionsPRFOutputs`: `enabled` after a registration
/// (whether the key made the credential with hmac-secret), `results` after
/// an authentication (absent when the key or the credential has no
/// hmac-secret).
public struct PRFOutputs: Codable, Sendable, Equatable {
    public var enabled: Bool?
    public var results: PRFValues?
    public init(enabled: Bool? = nil, results: PRFValues? = nil) {
        self.enabled = enabled
        self.results = results
    }
}

/// `hmacGetSecret` in `credentials.get`: CTAP hmac-secret's own salts,
/// 32 bytes each, sent as they are (no PRF hashing), for programs that
/// are not web pages and must match what libfido2 gives them directly
/// (`systemd-cryptenroll`, `age-plugin-fido2-hmac`).
public struct HMACGetSecretInput: Codable, Sendable, Equatable {
    public var salt1: Base64URLBytes
    public var salt2: Base64URLBytes?
    public init(salt1: [UInt8], salt2: [UInt8]? = nil) {
        self.salt1 = Base64URLBytes(salt1)
        self.salt2 = salt2.map(Base64URLBytes.init)
    }
}

/// `clientExtensionResults.hmacGetSecret`: HMAC-SHA-256 of each salt under
/// the credential's secret, 32 bytes each.
public struct HMACGetSecretOutput: Codable, Sendable, Equatable {
    public var output1: Base64URLBytes
    public var output2: Base64URLBytes?
    public init(output1: [UInt8], output2: [UInt8]? = nil) {
        self.output1 = Base64URLBytes(output1)
        self.output2 = output2.map(Base64URLBytes.init)
    }
}

extension CredentialResult {
    /// `clientExtensionResults.prf`, typed; nil when the reply has none.
    public var prfOutputs: PRFOutputs? { clientExtensionResult("prf") }

    /// `clientExtensionResults.hmacGetSecret`, typed; nil when the key gave no outputs.
    public var hmacGetSecretOutput: HMACGetSecretOutput? { clientExtensionResult("hmacGetSecret") }

    private func clientExtensionResult<T: Decodable>(_ name: String) -> T? {
        guard let value = credential["clientExtensionResults"]?[name] else { return nil }
        return try? JSONValueDecoder().decode(T.self, from: value)
    }
}
