import CBOR

/// A credential's public key as OpenSSH stores it: for `ecdsa-sk` the
/// uncompressed SEC1 point (0x04 ‖ x ‖ y), for `ed25519-sk` the 32 raw
/// bytes. Read from the COSE_Key (RFC 9053) the key returned.
public enum SSHPublicKey {
    public static func bytes(fromCOSE key: CBOR, algorithm: SSHKeyAlgorithm) throws(ProviderError) -> [UInt8] {
        guard let map = key.mapValue else { throw malformed("it is not a COSE_Key map") }
        let keyType = map[1]?.intValue, coseAlgorithm = map[3]?.intValue, curve = map[-1]?.intValue
        switch algorithm {
        case .ecdsaP256:
            // kty EC2 (2), alg ES256 (-7), crv P-256 (1).
            guard keyType == 2, coseAlgorithm == nil || coseAlgorithm == -7, curve == 1,
                  let x = map[-2]?.bytesValue, let y = map[-3]?.bytesValue, x.count == 32, y.count == 32
            else { throw malformed("it is not a P-256 key") }
            return [0x04] + x + y
        case .ed25519:
            // kty OKP (1), alg EdDSA (-8), crv Ed25519 (6).
            guard keyType == 1, coseAlgorithm == nil || coseAlgorithm == -8, curve == 6,
                  let x = map[-2]?.bytesValue, x.count == 32
            else { throw malformed("it is not an Ed25519 key") }
            return x
        }
    }

    private static func malformed(_ why: String) -> ProviderError {
        ProviderError(.general, "the key returned a public key OpenSSH cannot use: \(why)")
    }
}
