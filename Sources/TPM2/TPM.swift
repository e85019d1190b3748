internal import CTSS2
import Synchronization
import SystemKit

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

    public init(tcti: String) throws(TPMError) {
        var state = Contexts()
        try check(
            "loading the TCTI \"\(tcti)\" (is a TPM there? device:/dev/tpmrm0 needs the device and the tss group's access to it, swtpm:path=… a running swtpm)",
            Tss2_TctiLdr_Initialize(tcti, &state.tcti))
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
        try create("an ES256 key", WrappedKey.init(public:private:)) { esys, primary, publicKey, privateKey in
            authkeyd_tpm_create_es256(esys, primary, publicKey, privateKey)
        }
    }

    /// The DER ECDSA signature of `key` over `digest` (SHA-256 of the
    /// message, 32 bytes), as WebAuthn's ES256 carries it.
    public func sign(digest: [UInt8], with key: WrappedKey) throws(TPMError) -> [UInt8] {
        let (publicKey, privateKey) = try key.parts()
        return try withLoaded(publicKey, privateKey, what: "a credential's key") { esys, loaded throws(TPMError) in
            var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
            defer { Esys_Free(signature) }
            try check("TPM2_Sign", authkeyd_tpm_sign_es256(esys, loaded, digest, digest.count, &signature))
            guard let signature else { throw TPMError("TPM2_Sign", code: authkeyd_tpm_rc_general_failure) }
            var r = [UInt8](repeating: 0, count: 32), s = [UInt8](repeating: 0, count: 32)
            var rSize = 0, sSize = 0
            guard authkeyd_tpm_ecdsa_rs(signature, &r, &rSize, &s, &sSize) == 0 else {
                throw TPMError("TPM2_Sign: not an ECDSA signature", code: authkeyd_tpm_rc_bad_value)
            }
            return ECDSASignature.der(r: r[0..<rSize], s: s[0..<sSize])
        }
    }

    /// Seals `secret` (at most `SealedSecret.maxSecretBytes`) in the TPM.
    public func seal(_ secret: [UInt8]) throws(TPMError) -> SealedSecret {
        try create("a sealed secret", SealedSecret.init(public:private:)) { esys, primary, publicObject, privateObject in
            authkeyd_tpm_create_sealed(esys, primary, secret, secret.count, publicObject, privateObject)
        }
    }

    /// The secret `sealed` holds, from the TPM that sealed it. A secret:
    /// zero it when done.
    public func unseal(_ sealed: SealedSecret) throws(TPMError) -> [UInt8] {
        let (publicObject, privateObject) = try sealed.parts()
        return try withLoaded(publicObject, privateObject, what: "a sealed secret") { esys, loaded throws(TPMError) in
            var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
            defer {
                // tpm2-tss's copy of the secret, zeroed before it is freed.
                if let data { withUnsafeMutableBytes(of: &data.pointee) { zeroSecret($0) } }
                Esys_Free(data)
            }
            try check("TPM2_Unseal", Esys_Unseal(
                esys, loaded, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &data))
            guard let data else { throw TPMError("TPM2_Unseal", code: authkeyd_tpm_rc_general_failure) }
            let size = min(Int(data.pointee.size), SealedSecret.maxSecretBytes)
            return withUnsafeBytes(of: data.pointee.buffer) { Array($0.prefix(size)) }
        }
    }

    /// TPM2_Create under the primary (`call`), and the object made from
    /// the parts it gives out; tpm2-tss's copies are freed either way.
    private func create<Object>(
        _ what: String, _ make: (TPM2B_PUBLIC, TPM2B_PRIVATE) throws(TPMError) -> Object,
        _ call: (OpaquePointer?, ESYS_TR, UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PUBLIC>?>,
            UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PRIVATE>?>) -> TSS2_RC
    ) throws(TPMError) -> Object {
        try contexts.withLock { state throws(TPMError) in
            var publicPart: UnsafeMutablePointer<TPM2B_PUBLIC>?
            var privatePart: UnsafeMutablePointer<TPM2B_PRIVATE>?
            defer {
                Esys_Free(publicPart)
                Esys_Free(privatePart)
            }
            try check("TPM2_Create (\(what))", call(state.esys, state.primary, &publicPart, &privatePart))
            guard let publicPart, let privatePart else { throw TPMError("TPM2_Create", code: authkeyd_tpm_rc_general_failure) }
            return try make(publicPart.pointee, privatePart.pointee)
        }
    }

    /// Loads an object under the primary for `body`, and flushes it after,
    /// whatever happens (a socket TPM has no resource manager to do it).
    private func withLoaded<T>(
        _ publicPart: TPM2B_PUBLIC, _ privatePart: TPM2B_PRIVATE, what: String,
        _ body: (OpaquePointer?, ESYS_TR) throws(TPMError) -> T
    ) throws(TPMError) -> T {
        var (publicPart, privatePart) = (publicPart, privatePart)
        return try contexts.withLock { state throws(TPMError) in
            var loaded = ESYS_TR(ESYS_TR_NONE)
            try check("TPM2_Load (\(what))", Esys_Load(
                state.esys, state.primary, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
                &privatePart, &publicPart, &loaded))
            defer { _ = Esys_FlushContext(state.esys, loaded) }
            return try body(state.esys, loaded)
        }
    }
}
