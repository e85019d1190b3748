internal import CTSS2

/// A TPM or tpm2-tss call that failed: which call, and the response code
/// with tpm2-tss's reading of it (`Tss2_RC_Decode`), e.g.
/// "tpm:parameter(1):integrity check failed".
public struct TPMError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let code: UInt32

    public init(_ call: String, code: UInt32) {
        self.call = call
        self.code = code
    }

    /// What tpm2-tss makes of the code.
    public var reason: String { String(cString: Tss2_RC_Decode(code)) }

    public var description: String { "\(call): \(reason) (0x\(String(code, radix: 16)))" }

    /// The code without the layer and the parameter, session or handle
    /// number a format-one code carries: what the TPM objected to.
    var tpmReason: UInt32 {
        let code = code & 0xFFFF
        // Format one (bit 7): the error is in bits 0-5, plus RC_FMT1.
        return code & 0x80 != 0 ? (code & 0x3F) | 0x80 : code
    }

    /// The TPM could not unwrap a blob: made by another TPM, under another
    /// primary, or altered (TPM_RC_INTEGRITY, or a blob that does not parse).
    public var isForeignBlob: Bool {
        [0x80 | 0x1F /* INTEGRITY */, 0x80 | 0x15 /* SIZE */, 0x80 | 0x04 /* VALUE */, 0x80 | 0x1A /* KEY */].contains(tpmReason)
    }
}

/// Runs a tpm2-tss call; a code other than success becomes a `TPMError`.
func check(_ call: String, _ code: TSS2_RC) throws(TPMError) {
    guard code == 0 else { throw TPMError(call, code: code) }
}
