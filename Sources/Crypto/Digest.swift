internal import CCrypto
import SystemKit

/// SHA-256, the hash of every FIDO2 structure this project handles.
public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        data.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { out in
                _ = CCrypto.SHA256(input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, out.baseAddress)
            }
        }
        return digest
    }

}

/// HMAC-SHA-256 (RFC 2104).
public enum HMACSHA256 {
    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                mac.withUnsafeMutableBufferPointer { out in
                    _ = HMAC(
                        EVP_sha256(), k.baseAddress, Int32(k.count),
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                        out.baseAddress, &length)
                }
            }
        }
        return mac
    }
}

/// HKDF-SHA-256 (RFC 5869), as CTAP's PIN/UV auth protocol 2 uses it.
public enum HKDFSHA256 {
    /// Extract then expand, through OpenSSL's `EVP_KDF` "HKDF": the
    /// pseudo-random key and the expansion blocks stay inside OpenSSL, which
    /// clears them when the context is freed, so no intermediate key is left
    /// in Swift memory. An empty salt means RFC 5869's zero salt; an empty
    /// info, no info. More than 255 × 32 bytes throws, as the RFC forbids it.
    /// The output is the caller's to zero.
    public static func deriveKey(
        inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], outputByteCount: Int
    ) throws(CryptoError) -> [UInt8] {
        let kdf = try unwrap(EVP_KDF_fetch(nil, authkeyd_KDF_HKDF, nil), "EVP_KDF_fetch(HKDF)")
        defer { EVP_KDF_free(kdf) }
        let context = try unwrap(EVP_KDF_CTX_new(kdf), "EVP_KDF_CTX_new")
        defer { EVP_KDF_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let derived = inputKeyMaterial.withUnsafeBytes { key in
            salt.withUnsafeBytes { salt in
                info.withUnsafeBytes { info in
                    // OpenSSL copies the key, salt and info into the context (and clears them on free).
                    var parameters = [
                        OSSL_PARAM_construct_utf8_string(
                            authkeyd_KDF_PARAM_DIGEST, UnsafeMutablePointer(mutating: authkeyd_DIGEST_SHA256), 0),
                        OSSL_PARAM_construct_octet_string(
                            authkeyd_KDF_PARAM_KEY, UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                    ]
                    if let base = salt.baseAddress, salt.count > 0 {
                        parameters.append(OSSL_PARAM_construct_octet_string(
                            authkeyd_KDF_PARAM_SALT, UnsafeMutableRawPointer(mutating: base), salt.count))
                    }
                    if let base = info.baseAddress, info.count > 0 {
                        parameters.append(OSSL_PARAM_construct_octet_string(
                            authkeyd_KDF_PARAM_INFO, UnsafeMutableRawPointer(mutating: base), info.count))
                    }
                    parameters.append(OSSL_PARAM_construct_end())
                    return output.withUnsafeMutableBufferPointer { out in
                        EVP_KDF_derive(context, out.baseAddress, out.count, &parameters)
                    }
                }
            }
        }
        guard derived == 1 else {
            zeroSecret(&output)
            throw CryptoError("EVP_KDF_derive(HKDF)")
        }
        return output
    }
}
