internal import CCrypto

// The EVP_PKEY calls every key type shares: one-shot signing and
// verification, and the public key's DER form.

/// Signs `message` with `key`. `digest` is the hash the algorithm signs
/// (SHA-256 for ES256 and RS256); nil for Ed25519, which hashes itself
/// and signs the message as it is.
func evpSign(_ message: [UInt8], with key: OpaquePointer, digest: OpaquePointer?) throws(CryptoError) -> [UInt8] {
    let context = try unwrap(EVP_MD_CTX_new(), "EVP_MD_CTX_new")
    defer { EVP_MD_CTX_free(context) }
    try check(EVP_DigestSignInit(context, nil, digest, nil, key), "EVP_DigestSignInit")
    var length = 0
    try check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign")
    var signature = [UInt8](repeating: 0, count: length)
    try check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
    return Array(signature.prefix(length))
}

/// Whether `signature` over `message` verifies with `key`; `digest` as
/// for `evpSign`.
func evpVerify(_ signature: [UInt8], for message: [UInt8], with key: OpaquePointer, digest: OpaquePointer?) -> Bool {
    guard let context = EVP_MD_CTX_new() else { return false }
    defer { EVP_MD_CTX_free(context) }
    guard EVP_DigestVerifyInit(context, nil, digest, nil, key) == 1 else { return false }
    return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
}

/// The DER SubjectPublicKeyInfo of `key`, as PEM files, X.509 and
/// WebAuthn's `getPublicKey()` hold it.
func subjectPublicKeyInfo(of key: OpaquePointer) -> [UInt8] {
    let length = i2d_PUBKEY(key, nil)
    var der = [UInt8](repeating: 0, count: Int(max(length, 0)))
    der.withUnsafeMutableBufferPointer { buffer in
        var cursor = buffer.baseAddress
        _ = i2d_PUBKEY(key, &cursor)
    }
    return der
}
