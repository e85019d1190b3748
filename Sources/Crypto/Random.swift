internal import CCrypto

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public func secureRandomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
    // RAND_bytes fails only when the system has no entropy at all; carrying
    // on with predictable keys would be worse than stopping.
    precondition(ok == 1, "RAND_bytes failed: no entropy source")
    return bytes
}

/// Compares two byte strings in time that depends only on their length.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in
            x.count == y.count && (x.count == 0 || CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0)
        }
    }
}
