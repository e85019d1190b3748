import CBOR
internal import CFido2
import Glibc
import SystemKit

/// The large-blob array (CTAP 2.1 §6.10) through libfido2: one blob per
/// credential, found and sealed with the credential's largeBlobKey
/// (AES-256-GCM, the plaintext DEFLATE-compressed, as CTAP 2.1 §12.3
/// describes), read and written in fragments of the key's message size.
///
/// Reading needs no verification. Writing needs a pinUvAuthToken with the
/// `lbw` permission where the key is protected by user verification
/// (CTAP 2.1 §6.10.2): libfido2 gets one with `pin`, or from the key's own
/// sensor when `pin` is nil. A key with neither PIN nor built-in
/// verification set up takes the write without one (`writingLargeBlobs`).
extension Device {
    /// The blob stored under `key`, or nil when the array holds none for it
    /// (`fido_dev_largeblob_get`). `key` is a credential's 32-byte largeBlobKey.
    public func largeBlob(key: [UInt8]) throws(FIDO2Error) -> [UInt8]? {
        try perform { (handle) throws(FIDO2Error) -> [UInt8]? in
            var pointer: UnsafeMutablePointer<UInt8>?
            var length = 0
            let status = fido_dev_largeblob_get(handle, key, key.count, &pointer, &length)
            defer { freeSecret(pointer, length) }
            if status == FIDO_ERR_NOTFOUND { return nil }
            try check(status, "fido_dev_largeblob_get")
            return bytes(pointer, length)
        }
    }

    /// Stores `blob` under `key`, replacing the blob stored there before,
    /// as `fido_dev_largeblob_set` does: the array is read, the entry made
    /// (see `LargeBlobEntry` for why here, not by libfido2 1.12) and put in
    /// place of the old one, and the array written back
    /// (`fido_dev_largeblob_get_array`, `fido_dev_largeblob_set_array`). A
    /// full array fails with `FIDO2Error.largeblobStorageFull`.
    public func setLargeBlob(_ blob: [UInt8], key: [UInt8], pin: PIN?) throws(FIDO2Error) {
        guard key.count == 32, !blob.isEmpty else {
            throw FIDO2Error(code: FIDO_ERR_INVALID_ARGUMENT, function: "setLargeBlob")
        }
        let entry = try LargeBlobEntry.seal(blob, key: key)
        try writingLargeBlobs(pin: pin) { (handle, pin) throws(FIDO2Error) in
            var entries = try Self.largeBlobEntries(handle)
            if let index = entries.firstIndex(where: { LargeBlobEntry.isSealed($0, under: key) }) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
            let array = CBOR.array(entries).encoded()
            try check(fido_dev_largeblob_set_array(handle, array, array.count, pin), "fido_dev_largeblob_set_array")
        }
    }

    /// The array as `fido_dev_largeblob_get_array` reads it.
    private static func largeBlobArrayBytes(_ handle: OpaquePointer) throws(FIDO2Error) -> [UInt8] {
        var pointer: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = fido_dev_largeblob_get_array(handle, &pointer, &length)
        defer { free(pointer) }
        try check(status, "fido_dev_largeblob_get_array")
        return bytes(pointer, length)
    }

    private static func largeBlobEntries(_ handle: OpaquePointer) throws(FIDO2Error) -> [CBOR] {
        let array = try largeBlobArrayBytes(handle)
        guard let entries = (try? CBOR.decode(array))?.arrayValue else {
            throw FIDO2Error(code: FIDO_ERR_INVALID_CBOR, function: "fido_dev_largeblob_get_array")
        }
        return entries
    }

    /// Removes the blob stored under `key` (`fido_dev_largeblob_remove`);
    /// `FIDO2Error.notFound` when there is none.
    public func removeLargeBlob(key: [UInt8], pin: PIN?) throws(FIDO2Error) {
        try writingLargeBlobs(pin: pin) { (handle, pin) throws(FIDO2Error) in
            try check(fido_dev_largeblob_remove(handle, key, key.count, pin), "fido_dev_largeblob_remove")
        }
    }

    /// The whole array, CBOR-encoded, without its integrity hash
    /// (`fido_dev_largeblob_get_array`). An array whose hash does not match
    /// reads as empty (`0x80`), as CTAP tells hosts to treat it.
    public func largeBlobArray() throws(FIDO2Error) -> [UInt8] {
        try perform { (handle) throws(FIDO2Error) -> [UInt8] in
            try Self.largeBlobArrayBytes(handle)
        }
    }

    /// Replaces the whole array with `cbor`, a CBOR array; libfido2 adds
    /// the integrity hash (`fido_dev_largeblob_set_array`).
    public func setLargeBlobArray(_ cbor: [UInt8], pin: PIN?) throws(FIDO2Error) {
        try writingLargeBlobs(pin: pin) { (handle, pin) throws(FIDO2Error) in
            try check(fido_dev_largeblob_set_array(handle, cbor, cbor.count, pin), "fido_dev_largeblob_set_array")
        }
    }

    /// Runs a write of the large-blob array with `pin` as CTAP 2.1 §6.10.2
    /// asks of a host: with a pinUvAuthToken where the key is protected by
    /// user verification, without one where it is not, as python-fido2
    /// writes. libfido2 1.12 (and later) asks a key that supports tokens
    /// with permissions for one whenever `pin` is NULL, from its built-in
    /// verification, which a key with neither refuses
    /// (FIDO_ERR_PIN_REQUIRED; `largeblob_set_array` in src/largeblob.c).
    /// For such a key the handle forgets what getInfo said for the write
    /// (`fido_dev_force_u2f` clears the flags, `fido_dev_force_fido2` gives
    /// the CBOR capability back), so that libfido2 sends the fragments
    /// without pinUvAuthParam; then the device is opened again, so that
    /// the calls that follow know the key's PIN protocols and options. A
    /// key that cannot be opened again is left closed, the write done; the
    /// next call says so.
    private func writingLargeBlobs(
        pin: PIN?, _ write: (OpaquePointer, UnsafePointer<CChar>?) throws(FIDO2Error) -> Void
    ) throws(FIDO2Error) {
        var forgotGetInfo = false
        defer { if forgotGetInfo { try? reopen() } }
        try perform { (handle) throws(FIDO2Error) in
            if pin == nil && fido_dev_supports_permissions(handle) && !fido_dev_has_pin(handle) && !fido_dev_has_uv(handle) {
                fido_dev_force_u2f(handle)
                fido_dev_force_fido2(handle)
                forgotGetInfo = true
            }
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in try write(handle, pin) }
        }
    }
}

/// Frees a buffer libfido2 allocated for a secret, zeroing it first.
private func freeSecret(_ pointer: UnsafeMutablePointer<UInt8>?, _ length: Int) {
    guard let pointer else { return }
    zeroSecret(UnsafeMutableRawBufferPointer(start: pointer, count: length))
    free(pointer)
}
