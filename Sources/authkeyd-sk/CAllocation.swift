import CSSHSecurityKeyAPI
import Glibc
import SSHSecurityKey

/// The responses as OpenSSH frees them: every struct and buffer from
/// `calloc`, so that its `free` (and `freezero`) releases them. A failed
/// allocation releases what was made and is an error, never a trap.
enum CAllocation {
    static func enrollResponse(_ key: EnrolledKey) throws(ProviderError) -> UnsafeMutablePointer<sk_enroll_response> {
        let response = try allocate(sk_enroll_response.self)
        do {
            try fill(&response.pointee, with: key)
        } catch {
            freeContents(of: &response.pointee)
            free(response)
            throw error
        }
        return response
    }

    static func signResponse(_ signed: SignedData) throws(ProviderError) -> UnsafeMutablePointer<sk_sign_response> {
        let response = try allocate(sk_sign_response.self)
        response.pointee.flags = signed.flags
        response.pointee.counter = signed.counter
        do {
            (response.pointee.sig_r, response.pointee.sig_r_len) = try copy(signed.signature.r)
            (response.pointee.sig_s, response.pointee.sig_s_len) = try copy(signed.signature.s)
        } catch {
            free(response.pointee.sig_r)
            free(response)
            throw error
        }
        return response
    }

    /// An array of `count` pointers, each to a filled `sk_resident_key`;
    /// nil for none.
    static func residentKeys(_ keys: [ResidentKey]) throws(ProviderError) -> UnsafeMutablePointer<UnsafeMutablePointer<sk_resident_key>?>? {
        guard !keys.isEmpty else { return nil }
        guard let array = calloc(keys.count, MemoryLayout<UnsafeMutablePointer<sk_resident_key>?>.stride)?
            .assumingMemoryBound(to: UnsafeMutablePointer<sk_resident_key>?.self)
        else { throw outOfMemory }
        for (index, key) in keys.enumerated() {
            do {
                array[index] = try residentKey(key, slot: index)
            } catch {
                for made in 0..<index { freeResidentKey(array[made]) }
                free(array)
                throw error
            }
        }
        return array
    }

    private static func residentKey(_ key: ResidentKey, slot: Int) throws(ProviderError) -> UnsafeMutablePointer<sk_resident_key> {
        let entry = try allocate(sk_resident_key.self)
        entry.pointee.alg = key.algorithm.rawValue
        entry.pointee.slot = slot
        entry.pointee.flags = key.flags.rawValue
        do throws(ProviderError) {
            guard let application = strdup(key.application) else { throw outOfMemory }
            entry.pointee.application = application
            (entry.pointee.user_id, entry.pointee.user_id_len) = try copy(key.userID)
            (entry.pointee.key.public_key, entry.pointee.key.public_key_len) = try copy(key.publicKey)
            (entry.pointee.key.key_handle, entry.pointee.key.key_handle_len) = try copy(key.keyHandle)
        } catch {
            freeResidentKey(entry)
            throw error
        }
        return entry
    }

    private static func fill(_ response: inout sk_enroll_response, with key: EnrolledKey) throws(ProviderError) {
        response.flags = key.flags.rawValue
        (response.public_key, response.public_key_len) = try copy(key.publicKey)
        (response.key_handle, response.key_handle_len) = try copy(key.keyHandle)
        (response.signature, response.signature_len) = try copy(key.attestationSignature)
        (response.attestation_cert, response.attestation_cert_len) = try copy(key.attestationCertificate)
        (response.authdata, response.authdata_len) = try copy(key.authenticatorData)
    }

    private static func freeContents(of response: inout sk_enroll_response) {
        free(response.public_key)
        free(response.key_handle)
        free(response.signature)
        free(response.attestation_cert)
        free(response.authdata)
    }

    private static func freeResidentKey(_ entry: UnsafeMutablePointer<sk_resident_key>?) {
        guard let entry else { return }
        free(entry.pointee.application)
        free(entry.pointee.user_id)
        freeContents(of: &entry.pointee.key)
        free(entry)
    }

    /// A zeroed struct from calloc.
    private static func allocate<T>(_ type: T.Type) throws(ProviderError) -> UnsafeMutablePointer<T> {
        guard let memory = calloc(1, MemoryLayout<T>.stride) else { throw outOfMemory }
        return memory.assumingMemoryBound(to: T.self)
    }

    /// A malloc'd copy, or (nil, 0) for no bytes: OpenSSH treats a null
    /// pointer as absent (no attestation certificate, no `s` for Ed25519).
    private static func copy(_ bytes: [UInt8]) throws(ProviderError) -> (UnsafeMutablePointer<UInt8>?, Int) {
        guard !bytes.isEmpty else { return (nil, 0) }
        guard let memory = malloc(bytes.count)?.assumingMemoryBound(to: UInt8.self) else { throw outOfMemory }
        memory.initialize(from: bytes, count: bytes.count)
        return (memory, bytes.count)
    }

    private static var outOfMemory: ProviderError { ProviderError(.general, "out of memory") }
}
