/// A signature as OpenSSH wants it back from sk_sign: for ECDSA the
/// integers r and s, unsigned big-endian without leading zeros (what
/// OpenSSL's BN_bn2bin gives OpenSSH's own middleware); for Ed25519 the 64
/// bytes in `r` and nothing in `s`.
public struct SSHSignature: Sendable, Equatable {
    public var r: [UInt8]
    public var s: [UInt8]

    public init(r: [UInt8], s: [UInt8]) {
        self.r = r
        self.s = s
    }

    /// From the signature the key made: DER `Ecdsa-Sig-Value` for ES256,
    /// the raw 64 bytes for EdDSA.
    public init(keySignature: [UInt8], algorithm: SSHKeyAlgorithm) throws(ProviderError) {
        switch algorithm {
        case .ed25519:
            guard keySignature.count == 64 else {
                throw ProviderError(.general, "the key returned an Ed25519 signature of \(keySignature.count) bytes, not 64")
            }
            self.init(r: keySignature, s: [])
        case .ecdsaP256:
            guard let (r, s) = Self.derIntegers(keySignature) else {
                throw ProviderError(.general, "the key returned an ECDSA signature that is not DER SEQUENCE { r, s }")
            }
            self.init(r: r, s: s)
        }
    }

    /// SEQUENCE { INTEGER r, INTEGER s } (RFC 3279 §2.2.3), in DER: each
    /// integer positive, at most 33 bytes for P-256, nothing after.
    static func derIntegers(_ der: [UInt8]) -> ([UInt8], [UInt8])? {
        var reader = DERReader(der)
        guard let sequence = reader.read(tag: 0x30), reader.isAtEnd else { return nil }
        var inner = DERReader(sequence)
        guard let r = inner.read(tag: 0x02), let s = inner.read(tag: 0x02), inner.isAtEnd,
              let r = positiveMagnitude(r), let s = positiveMagnitude(s)
        else { return nil }
        return (r, s)
    }

    /// A DER INTEGER's content as an unsigned magnitude without leading
    /// zeros; nil for a negative one or one longer than a P-256 scalar.
    private static func positiveMagnitude(_ content: [UInt8]) -> [UInt8]? {
        guard let first = content.first, first & 0x80 == 0, content.count <= 33 else { return nil }
        return Array(content.drop(while: { $0 == 0 }))
    }
}

/// Reads definite-length DER elements one after another.
struct DERReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    /// The content of the next element if it has `tag`, else nil.
    mutating func read(tag: UInt8) -> [UInt8]? {
        guard offset + 2 <= bytes.count, bytes[offset] == tag else { return nil }
        var length = Int(bytes[offset + 1])
        var start = offset + 2
        if length & 0x80 != 0 {
            // Long form: the low bits say how many length bytes follow.
            let count = length & 0x7f
            guard count >= 1, count <= 2, start + count <= bytes.count else { return nil }
            length = bytes[start..<(start + count)].reduce(0) { $0 << 8 | Int($1) }
            start += count
        }
        guard start + length <= bytes.count else { return nil }
        offset = start + length
        return Array(bytes[start..<offset])
    }
}
