/// DER `SEQUENCE { r, s }` (RFC 3279) from the unsigned big-endian
/// integers OpenSSH receives from sk_sign: written here, apart from the
/// provider's own reader, to check its split against the key's signature.
public func derECDSASignature(r: [UInt8], s: [UInt8]) -> [UInt8] {
    func integer(_ magnitude: [UInt8]) -> [UInt8] {
        // A set high bit would read as negative: DER pads it with a zero.
        let content = (magnitude.first ?? 0x80) & 0x80 != 0 ? [0] + magnitude : magnitude
        return [0x02, UInt8(content.count)] + content
    }
    let body = integer(r) + integer(s)
    return [0x30, UInt8(body.count)] + body
}
