import CBOR
internal import CFido2
import Crypto
import SystemKit

/// One entry of the large-blob array as CTAP 2.1 §12.3 lays it out:
/// `{1: ciphertext, 2: nonce, 3: origSize}`, the ciphertext being
/// AES-256-GCM under the credential's largeBlobKey of the DEFLATE-compressed
/// blob, with `"blob" ‖ uint64LE(origSize)` as associated data.
///
/// Made here rather than by `fido_dev_largeblob_set` because libfido2 1.12
/// refuses to encrypt fewer than 16 bytes (its `aes256_gcm` checks the
/// input length for encryption as for decryption; fixed upstream in
/// 2a077ca, 2024), so any blob that compresses that small, every short one,
/// fails there with FIDO_ERR_INTERNAL. The DEFLATE stream is of stored
/// (uncompressed) blocks: valid RFC 1951 that every reader inflates, and of
/// a size known in advance.
struct LargeBlobEntry {
    static let nonceLength = AES256.gcmNonceByteCount

    /// Seals `blob` under `key` with a fresh nonce.
    static func seal(_ blob: [UInt8], key: [UInt8]) throws(FIDO2Error) -> CBOR {
        let nonce = secureRandomBytes(nonceLength)
        var plaintext = storedDeflate(blob)
        defer { zeroSecret(&plaintext) }
        guard let ciphertext = try? AES256.gcmSeal(plaintext, key: key, nonce: nonce, authenticating: associatedData(blob.count))
        else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "largeBlob AES-256-GCM") }
        return .map([1: .bytes(ciphertext), 2: .bytes(nonce), 3: .unsigned(UInt64(blob.count))])
    }

    /// Whether `entry` was sealed under `key`: its tag verifies.
    static func isSealed(_ entry: CBOR, under key: [UInt8]) -> Bool {
        guard let map = entry.mapValue, let ciphertext = map[1]?.bytesValue, let nonce = map[2]?.bytesValue,
            nonce.count == nonceLength, let size = map[3]?.unsignedValue, size <= UInt64(Int.max),
            var opened = try? AES256.gcmOpen(ciphertext, key: key, nonce: nonce, authenticating: associatedData(Int(size)))
        else { return false }
        zeroSecret(&opened)
        return true
    }

    static func associatedData(_ size: Int) -> [UInt8] {
        Array("blob".utf8) + withUnsafeBytes(of: UInt64(size).littleEndian) { [UInt8]($0) }
    }

    /// RFC 1951 stored blocks (BTYPE 00, at most 65535 bytes each), led by
    /// empty non-final blocks until the stream is at least 16 bytes long.
    static func storedDeflate(_ data: [UInt8]) -> [UInt8] {
        func block(_ chunk: ArraySlice<UInt8>, final: Bool) -> [UInt8] {
            let length = UInt16(chunk.count)
            return [final ? 1 : 0, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
                + chunk
        }
        var chunks = stride(from: 0, to: data.count, by: 65535).map { data[$0..<min(data.count, $0 + 65535)] }
        if chunks.isEmpty { chunks = [[]] }
        var stream: [UInt8] = []
        let plainLength = data.count + 5 * chunks.count
        for _ in 0..<max(0, (16 - plainLength + 4) / 5) { stream += block([], final: false) }
        for (index, chunk) in chunks.enumerated() { stream += block(chunk, final: index == chunks.count - 1) }
        return stream
    }
}
