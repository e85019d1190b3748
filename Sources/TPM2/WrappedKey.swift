internal import CTSS2

/// A credential's key as the TPM gave it out: its public part and its
/// private part wrapped by the storage primary (TPM2B_PUBLIC and
/// TPM2B_PRIVATE in the TPM's own marshalled form). Only the TPM that made
/// it can load it, under the same primary; the bytes alone sign nothing.
public struct WrappedKey: Equatable, Sendable {
    public let publicPart: [UInt8]
    public let privatePart: [UInt8]
    /// The key's point, uncompressed (0x04 ‖ x ‖ y), as COSE and OpenSSL take it.
    public let publicPoint: [UInt8]

    init(public publicKey: TPM2B_PUBLIC, private privateKey: TPM2B_PRIVATE) throws(TPMError) {
        publicPart = try marshal(publicKey, Tss2_MU_TPM2B_PUBLIC_Marshal)
        privatePart = try marshal(privateKey, Tss2_MU_TPM2B_PRIVATE_Marshal)
        publicPoint = try Self.point(of: publicKey)
    }

    /// A key read back (from a credential id or a file): it must parse, and
    /// be a key made from authkeyd's ES256 template.
    public init(publicPart: [UInt8], privatePart: [UInt8]) throws(TPMError) {
        var (publicKey, _) = try readParts(publicPart, privatePart)
        guard authkeyd_tpm_is_es256_key(&publicKey) != 0 else {
            throw TPMError("reading a wrapped key: not an ES256 key of authkeyd's", code: authkeyd_tpm_rc_bad_value)
        }
        self.publicPart = publicPart
        self.privatePart = privatePart
        publicPoint = try Self.point(of: publicKey)
    }

    /// Both parts for the TPM's `Load`.
    func parts() throws(TPMError) -> (TPM2B_PUBLIC, TPM2B_PRIVATE) { try readParts(publicPart, privatePart) }

    private static func point(of key: TPM2B_PUBLIC) throws(TPMError) -> [UInt8] {
        var key = key
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        var xSize = 0, ySize = 0
        guard authkeyd_tpm_ecc_point(&key, &x, &xSize, &y, &ySize) == 0 else {
            throw TPMError("reading a key's point: not a P-256 key", code: authkeyd_tpm_rc_bad_value)
        }
        // Coordinates shorter than 32 bytes lost leading zeros.
        return [0x04] + leftPadded(x[0..<xSize], to: 32) + leftPadded(y[0..<ySize], to: 32)
    }
}

private func leftPadded(_ bytes: ArraySlice<UInt8>, to count: Int) -> [UInt8] {
    [UInt8](repeating: 0, count: max(0, count - bytes.count)) + bytes
}
