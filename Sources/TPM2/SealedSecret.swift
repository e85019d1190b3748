internal import CTSS2

/// A secret the TPM keeps: a sealed data object's public part and its
/// private part wrapped by the storage primary. The bytes may sit in a
/// file; only the TPM that sealed it gives the secret back (`TPM.unseal`).
public struct SealedSecret: Equatable, Sendable {
    public let publicPart: [UInt8]
    public let privatePart: [UInt8]

    /// The most a sealed data object holds (MAX_SYM_DATA).
    public static let maxSecretBytes = 128

    init(public publicObject: TPM2B_PUBLIC, private privateObject: TPM2B_PRIVATE) throws(TPMError) {
        publicPart = try marshal(publicObject, Tss2_MU_TPM2B_PUBLIC_Marshal)
        privatePart = try marshal(privateObject, Tss2_MU_TPM2B_PRIVATE_Marshal)
    }

    /// A sealed secret read back (from a file): it must parse, and be an
    /// object made from authkeyd's sealed-data template.
    public init(publicPart: [UInt8], privatePart: [UInt8]) throws(TPMError) {
        var (publicObject, _) = try readParts(publicPart, privatePart)
        guard authkeyd_tpm_is_sealed_object(&publicObject) != 0 else {
            throw TPMError("reading a sealed secret: not a sealed object of authkeyd's", code: authkeyd_tpm_rc_bad_value)
        }
        self.publicPart = publicPart
        self.privatePart = privatePart
    }

    func parts() throws(TPMError) -> (TPM2B_PUBLIC, TPM2B_PRIVATE) { try readParts(publicPart, privatePart) }
}
