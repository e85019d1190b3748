internal import CTSS2

/// The longest a marshalled part may be (TPM2B_PUBLIC is at most 2 + 632
/// bytes, TPM2B_PRIVATE 2 + 1,550): a longer one is not an object of ours.
let maxMarshalledPartBytes = 2048

/// The two parts of an object the TPM gave out, read back: each must be
/// one marshalled structure, no longer than an object of ours can be.
func readParts(_ publicPart: [UInt8], _ privatePart: [UInt8]) throws(TPMError) -> (TPM2B_PUBLIC, TPM2B_PRIVATE) {
    guard publicPart.count <= maxMarshalledPartBytes, privatePart.count <= maxMarshalledPartBytes else {
        throw TPMError("reading a wrapped object", code: authkeyd_tpm_rc_bad_size)
    }
    return (try unmarshal(publicPart, TPM2B_PUBLIC(), Tss2_MU_TPM2B_PUBLIC_Unmarshal),
            try unmarshal(privatePart, TPM2B_PRIVATE(), Tss2_MU_TPM2B_PRIVATE_Unmarshal))
}

func marshal<T>(
    _ value: T, _ function: (UnsafePointer<T>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
) throws(TPMError) -> [UInt8] {
    var value = value
    var buffer = [UInt8](repeating: 0, count: maxMarshalledPartBytes)
    var offset = 0
    try check("marshalling an object", function(&value, &buffer, buffer.count, &offset))
    return Array(buffer[0..<offset])
}

func unmarshal<T>(
    _ bytes: [UInt8], _ empty: T, _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<T>?) -> TSS2_RC
) throws(TPMError) -> T {
    var value = empty
    var offset = 0
    try check("reading a wrapped object", function(bytes, bytes.count, &offset, &value))
    // Trailing bytes: not one marshalled structure.
    guard offset == bytes.count else { throw TPMError("reading a wrapped object: trailing bytes", code: authkeyd_tpm_rc_bad_size) }
    return value
}
