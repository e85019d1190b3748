internal import CTSS2
import Synchronization

/// A connection to a TPM 2.0 through tpm2-tss's ESAPI: the storage primary
/// loaded once, then ES256 keys made under it and signatures made with
/// them, each key loaded for its one signature and flushed after it.
///
/// `tcti` is a tpm2-tss TCTI string: `device:/dev/tpmrm0` (the kernel's
/// resource manager), or `swtpm:path=SOCKET` for a software TPM in tests.
/// Without a resource manager in front (a socket TPM), every transient
/// object must be flushed, or the TPM runs out of object slots: so the
/// primary is flushed when the connection closes, and a key after its
/// signature, whatever happens.
///
/// One ESAPI context is not for two threads at once: the calls take turns
/// (a real TPM runs one command at a time anyway).
public final class TPM: Sendable {
    private struct Contexts: @unchecked Sendable {
        var tcti: OpaquePointer?
        var esys: OpaquePointer?
        var primary: ESYS_TR = ESYS_TR(ESYS_TR_NONE)
    }
    private let contexts: Mutex<Contexts>
    public let tcti: String

    public init(tcti: String) throws(TPMError) {
        self.tcti = tcti
        var state = Contexts()
        try check("loading the TCTI \"\(tcti)\"", Tss2_TctiLdr_Initialize(tcti, &state.tcti))
        do throws(TPMError) {
            try check("Esys_Initialize", Esys_Initialize(&state.esys, state.tcti, nil))
            try check("TPM2_CreatePrimary (the storage key)", authkeyd_tpm_create_primary(state.esys, &state.primary))
        } catch {
            Self.close(&state)
            throw error
        }
        contexts = Mutex(state)
    }

    deinit {
        contexts.withLock { Self.close(&$0) }
    }

    private static func close(_ state: inout Contexts) {
        if state.primary != ESYS_TR(ESYS_TR_NONE) { _ = Esys_FlushContext(state.esys, state.primary) }
        if state.esys != nil { Esys_Finalize(&state.esys) }
        if state.tcti != nil { Tss2_TctiLdr_Finalize(&state.tcti) }
    }

    /// A new ES256 key, made in the TPM; its private part leaves it only
    /// wrapped.
    public func makeES256Key() throws(TPMError) -> WrappedKey {
        try contexts.withLock { state throws(TPMError) in
            var publicKey: UnsafeMutablePointer<TPM2B_PUBLIC>?
            var privateKey: UnsafeMutablePointer<TPM2B_PRIVATE>?
            defer {
                Esys_Free(publicKey)
                Esys_Free(privateKey)
            }
            try check("TPM2_Create (an ES256 key)", authkeyd_tpm_create_es256(state.esys, state.primary, &publicKey, &privateKey))
            guard let publicKey, let privateKey else { throw TPMError("TPM2_Create", code: authkeyd_tpm_rc_general_failure) }
            return try WrappedKey(public: publicKey.pointee, private: privateKey.pointee)
        }
    }

    /// The DER ECDSA signature of `key` over `digest` (SHA-256 of the
    /// message, 32 bytes), as WebAuthn's ES256 carries it.
    public func sign(digest: [UInt8], with key: WrappedKey) throws(TPMError) -> [UInt8] {
        var (publicKey, privateKey) = try key.parts()
        return try contexts.withLock { state throws(TPMError) in
            var loaded = ESYS_TR(ESYS_TR_NONE)
            try check("TPM2_Load (a credential's key)", Esys_Load(
                state.esys, state.primary, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
                &privateKey, &publicKey, &loaded))
            defer { _ = Esys_FlushContext(state.esys, loaded) }
            var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
            defer { Esys_Free(signature) }
            try check("TPM2_Sign", authkeyd_tpm_sign_es256(state.esys, loaded, digest, digest.count, &signature))
            guard let signature else { throw TPMError("TPM2_Sign", code: authkeyd_tpm_rc_general_failure) }
            var r = [UInt8](repeating: 0, count: 32), s = [UInt8](repeating: 0, count: 32)
            var rSize = 0, sSize = 0
            guard authkeyd_tpm_ecdsa_rs(signature, &r, &rSize, &s, &sSize) == 0 else {
                throw TPMError("TPM2_Sign: not an ECDSA signature", code: authkeyd_tpm_rc_bad_value)
            }
            return ECDSASignature.der(r: r[0..<rSize], s: s[0..<sSize])
        }
    }
}
