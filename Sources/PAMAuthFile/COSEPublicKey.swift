import CBOR

extension EnrolledCredential {
    /// The type and the public-key bytes pamu2fcfg writes for a credential,
    /// which are libfido2's (`fido_cred_pubkey_ptr`), from the COSE_Key
    /// (RFC 9053) in the registration's authenticator data: x ‖ y of a
    /// P-256 key, the 32 bytes of an Ed25519 key, the modulus (256 bytes)
    /// ‖ the exponent (3 bytes) of an RSA key. nil for any other key.
    public static func publicKey(fromCOSE key: CBOR) -> (algorithm: Algorithm, bytes: [UInt8])? {
        guard let map = key.mapValue else { return nil }
        switch (map[1]?.intValue, map[3]?.intValue) {
        case (2?, .some(-7)):
            guard map[-1]?.intValue == 1, let x = map[-2]?.bytesValue, let y = map[-3]?.bytesValue, x.count == 32, y.count == 32
            else { return nil }
            return (.es256, x + y)
        case (1?, .some(-8)):
            guard map[-1]?.intValue == 6, let x = map[-2]?.bytesValue, x.count == 32 else { return nil }
            return (.eddsa, x)
        case (3?, .some(-257)):
            guard let modulus = map[-1]?.bytesValue, let exponent = map[-2]?.bytesValue, modulus.count == 256, exponent.count <= 3
            else { return nil }
            return (.rs256, modulus + [UInt8](repeating: 0, count: 3 - exponent.count) + exponent)
        default:
            return nil
        }
    }
}
