/// ECDSA's (r, s) as DER (SEC 1 §C.5: a SEQUENCE of two INTEGERs), the
/// form WebAuthn's ES256 signatures and OpenSSL take; the TPM gives r and
/// s as plain big-endian numbers.
enum ECDSASignature {
    static func der(r: ArraySlice<UInt8>, s: ArraySlice<UInt8>) -> [UInt8] {
        let body = integer(r) + integer(s)
        // At most 2 × (2 + 33) bytes: the short length form always fits.
        return [0x30, UInt8(body.count)] + body
    }

    /// A DER INTEGER: no leading zero bytes but one before a high bit, so
    /// that the number reads as positive.
    private static func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var digits = Array(bytes.drop(while: { $0 == 0 }))
        if digits.isEmpty { digits = [0] }
        if digits[0] & 0x80 != 0 { digits.insert(0, at: 0) }
        return [0x02, UInt8(digits.count)] + digits
    }
}
