internal import CCrypto

/// AES-256 in the two modes this project needs: CBC without padding (CTAP's
/// PIN/UV auth protocols) and GCM (sealing credential ids and state files).
public enum AES256 {
    public static let keyByteCount = 32
    public static let blockByteCount = 16

    /// AES-256-CBC without padding; `data` must be a whole number of blocks.
    public static func cbcEncrypt(_ data: [UInt8], key: [UInt8], iv: [UInt8]) throws(CryptoError) -> [UInt8] {
        try cbc(data, key: key, iv: iv, encrypt: true)
    }

    /// AES-256-CBC without padding; `data` must be a whole number of blocks.
    public static func cbcDecrypt(_ data: [UInt8], key: [UInt8], iv: [UInt8]) throws(CryptoError) -> [UInt8] {
        try cbc(data, key: key, iv: iv, encrypt: false)
    }

    private static func cbc(_ data: [UInt8], key: [UInt8], iv: [UInt8], encrypt: Bool) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount, iv.count == blockByteCount else {
            throw CryptoError("AES-256-CBC", reason: "key must be 32 bytes and IV 16 bytes")
        }
        guard data.count % blockByteCount == 0 else {
            throw CryptoError("AES-256-CBC", reason: "input is not a whole number of 16-byte blocks")
        }
        let context = try unwrap(EVP_CIPHER_CTX_new(), "EVP_CIPHER_CTX_new")
        defer { EVP_CIPHER_CTX_free(context) }
        try check(EVP_CipherInit_ex(context, EVP_aes_256_cbc(), nil, key, iv, encrypt ? 1 : 0), "EVP_CipherInit_ex")
        try check(EVP_CIPHER_CTX_set_padding(context, 0), "EVP_CIPHER_CTX_set_padding")
        var output = [UInt8](repeating: 0, count: data.count + blockByteCount)
        var written: Int32 = 0
        var final: Int32 = 0
        try check(EVP_CipherUpdate(context, &output, &written, data, Int32(data.count)), "EVP_CipherUpdate")
        try output.withUnsafeMutableBufferPointer { (buffer) throws(CryptoError) in
            try check(EVP_CipherFinal_ex(context, buffer.baseAddress! + Int(written), &final), "EVP_CipherFinal_ex")
        }
        return Array(output.prefix(Int(written + final)))
    }

    public static let gcmNonceByteCount = 12
    public static let gcmTagByteCount = 16

    /// AES-256-GCM: returns ciphertext followed by the 16-byte tag.
    public static func gcmSeal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try gcm(plaintext, key: key, nonce: nonce, aad: aad, tag: nil)
    }

    /// Opens what `gcmSeal` produced; throws when the tag does not verify.
    public static func gcmOpen(
        _ sealed: [UInt8], key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard sealed.count >= gcmTagByteCount else {
            throw CryptoError("AES-256-GCM", reason: "sealed data shorter than its tag")
        }
        let ciphertext = Array(sealed.dropLast(gcmTagByteCount))
        let tag = Array(sealed.suffix(gcmTagByteCount))
        return try gcm(ciphertext, key: key, nonce: nonce, aad: aad, tag: tag)
    }

    /// Encrypts when `tag` is nil (appending the tag), else decrypts and verifies it.
    private static func gcm(
        _ input: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8], tag: [UInt8]?
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount, nonce.count == gcmNonceByteCount else {
            throw CryptoError("AES-256-GCM", reason: "key must be 32 bytes and nonce 12 bytes")
        }
        let encrypt = tag == nil
        let context = try unwrap(EVP_CIPHER_CTX_new(), "EVP_CIPHER_CTX_new")
        defer { EVP_CIPHER_CTX_free(context) }
        try check(EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce, encrypt ? 1 : 0), "EVP_CipherInit_ex")
        var written: Int32 = 0
        if !aad.isEmpty {
            try check(EVP_CipherUpdate(context, nil, &written, aad, Int32(aad.count)), "EVP_CipherUpdate(aad)")
        }
        var output = [UInt8](repeating: 0, count: input.count + blockByteCount)
        try check(EVP_CipherUpdate(context, &output, &written, input, Int32(input.count)), "EVP_CipherUpdate")
        if var tag {
            try check(
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(gcmTagByteCount), &tag),
                "EVP_CTRL_GCM_SET_TAG")
        }
        var final: Int32 = 0
        try output.withUnsafeMutableBufferPointer { (buffer) throws(CryptoError) in
            guard EVP_CipherFinal_ex(context, buffer.baseAddress! + Int(written), &final) == 1 else {
                throw CryptoError("AES-256-GCM", reason: encrypt ? "encryption failed" : "authentication tag mismatch")
            }
        }
        var result = Array(output.prefix(Int(written + final)))
        if encrypt {
            var newTag = [UInt8](repeating: 0, count: gcmTagByteCount)
            try check(
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(gcmTagByteCount), &newTag),
                "EVP_CTRL_GCM_GET_TAG")
            result += newTag
        }
        return result
    }
}
