internal import CFido2
import Glibc
import Synchronization

/// libfido2's set-up, which is per thread.
///
/// `fido_init` must precede every other call "in the context of the
/// executing thread" (fido_init(3)); libfido2 keeps its U2F-fallback switch
/// in thread-local storage. Every entry point of this module therefore calls
/// `ensureInitialized()`, so no caller and no thread can forget it.
///
/// U2F fallback is off: a silent fall back to U2F after a CTAP2 key's
/// getInfo failed turns one clear error into many confusing ones
/// (docs/libfido2.md). Keys that speak only U2F still work: libfido2
/// decides by the CBOR capability of the CTAPHID INIT reply, sends such a
/// key no getInfo at all, and the flag applies only when getInfo fails
/// (libfido2 1.12 `fido_dev_open_rx`; see `AuthenticatorInfo.u2fOnly`).
public enum FIDO2Library {
    private static let debugEnabled = Atomic<Bool>(false)

    /// Turns on libfido2's debug output (frames in hex, to stderr) for threads
    /// that initialise after this call. Never in production: frames can hold
    /// PIN-derived material.
    public static func enableDebugLogging() {
        debugEnabled.store(true, ordering: .relaxed)
    }

    /// Initialises libfido2 on the calling thread, the first time only.
    static func ensureInitialized() {
        guard pthread_getspecific(initializedKey) == nil else { return }
        var flags = FIDO_DISABLE_U2F_FALLBACK
        if debugEnabled.load(ordering: .relaxed) { flags |= FIDO_DEBUG }
        fido_init(Int32(flags))
        pthread_setspecific(initializedKey, UnsafeRawPointer(bitPattern: 1))
    }

    /// A thread-specific flag: non-nil once the thread has called `fido_init`.
    private static let initializedKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()
}
