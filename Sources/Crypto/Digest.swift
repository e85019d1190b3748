internal import CCrypto

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
    public static func deriveKey(
        inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], outputByteCount: Int
    ) -> [UInt8] {
        let pseudoRandomKey = HMACSHA256.authenticationCode(for: inputKeyMaterial, key: salt)
        var output: [UInt8] = []
        var previous: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < outputByteCount {
            previous = HMACSHA256.authenticationCode(for: previous + info + [counter], key: pseudoRandomKey)
            output += previous
            counter += 1
        }
        return Array(output.prefix(outputByteCount))
    }
}
