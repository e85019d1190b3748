import CBOR
import Crypto

/// authenticatorLargeBlobs (CTAP 2.1 §6.10): the serialized large-blob
/// array, read and written in fragments. The key stores the bytes as they
/// come and checks only the integrity hash at the end; what the entries
/// mean (blobs sealed with each credential's largeBlobKey) is the hosts'
/// business. Step numbers in comments are the specification's.
extension Authenticator {
    /// The largest fragment a get may ask for or a set may carry:
    /// maxMsgSize - 64 (§6.10.1).
    static var maxLargeBlobFragmentLength: Int { maxMessageSize - 64 }

    func largeBlobs(_ parameters: Parameters) throws(CTAP2Status) -> CBORMap? {
        guard configuration.largeBlobArrayLimit > 0 else { throw .invalidCommand }
        let get = try parameters.unsigned(0x01)
        let set = try parameters.bytes(0x02)
        let offsetValue = try parameters.unsigned(0x03)
        let length = try parameters.unsigned(0x04)
        // 1-3.
        guard let offsetValue else { throw .invalidParameter }
        guard (get == nil) != (set == nil) else { throw .invalidParameter }
        let stored = state.largeBlobArray
        // 4. A read.
        if let get {
            guard length == nil, !parameters.contains(0x05), !parameters.contains(0x06) else { throw .invalidParameter }
            guard get <= UInt64(Self.maxLargeBlobFragmentLength) else { throw .invalidLength }
            guard offsetValue <= UInt64(stored.count) else { throw .invalidParameter }
            let start = Int(offsetValue)
            let end = min(stored.count, start + Int(get))
            return [0x01: .bytes(Array(stored[start..<end]))]
        }
        // 5. A write.
        guard let set else { throw .invalidParameter }
        guard set.count <= Self.maxLargeBlobFragmentLength else { throw .invalidLength }
        if offsetValue == 0 {
            guard let length else { throw .invalidParameter }
            guard length <= UInt64(configuration.largeBlobArrayLimit) else { throw .largeBlobStorageFull }
            guard length >= UInt64(LargeBlobArray.hashLength + 1) else { throw .invalidParameter }
            volatile.largeBlobWrite = PendingLargeBlobWrite(expectedLength: Int(length))
        } else if length != nil {
            throw .invalidParameter
        }
        guard let pending = volatile.largeBlobWrite, offsetValue == UInt64(pending.nextOffset) else {
            throw .invalidSequence
        }
        if isProtectedByUV || state.alwaysUV {
            try verifyLargeBlobWrite(parameters, offset: pending.nextOffset, fragment: set)
        }
        guard pending.nextOffset + set.count <= pending.expectedLength else { throw .invalidParameter }
        volatile.largeBlobWrite?.append(set)
        guard let written = volatile.largeBlobWrite, written.nextOffset == written.expectedLength else { return nil }
        // The last fragment: check the whole before it replaces the stored array.
        volatile.largeBlobWrite = nil
        guard LargeBlobArray.hasValidHash(written.buffer) else { throw .integrityFailure }
        state.largeBlobArray = written.buffer
        try persist()
        return nil
    }

    /// 5.e: a pinUvAuthParam over `32×0xff ‖ 0x0c 0x00 ‖ uint32LE(offset) ‖
    /// SHA-256(fragment)` from a token with the lbw permission. Unlike other
    /// commands it does not need the token to still vouch for verification:
    /// lbw is the one permission a token keeps after the getAssertion it
    /// was issued with (§6.5.5.7), so that a host can write just after.
    private func verifyLargeBlobWrite(_ parameters: Parameters, offset: Int, fragment: [UInt8]) throws(CTAP2Status) {
        guard let authParameter = try parameters.bytes(0x05) else { throw .pinUvAuthTokenRequired }
        let chosen = try authProtocol(try parameters.unsigned(0x06))
        let offsetBytes = withUnsafeBytes(of: UInt32(offset).littleEndian) { [UInt8]($0) }
        let message =
            [UInt8](repeating: 0xFF, count: 32) + [CTAP2Command.largeBlobs.rawValue, 0x00] + offsetBytes
            + SHA256.hash(fragment)
        guard volatile.token.verify(message, signature: authParameter, protocol: chosen),
            volatile.token.permissions.contains(.largeBlobWrite)
        else { throw .pinAuthInvalid }
    }

    /// What getInfo says of large blobs: the `largeBlobs` option, the
    /// `largeBlobKey` extension and maxSerializedLargeBlobArray (0x0B).
    func addLargeBlobsInfo(to info: inout CBORMap) {
        guard configuration.largeBlobArrayLimit > 0 else { return }
        if var options = info[0x04]?.mapValue {
            options["largeBlobs"] = true
            info[0x04] = .map(options)
        }
        info[0x02] = .array((info[0x02]?.arrayValue ?? []) + ["largeBlobKey"])
        info[0x0B] = .int(configuration.largeBlobArrayLimit)
    }

    /// The largeBlobKey extension input of makeCredential or getAssertion
    /// (CTAP 2.1 §12.3): only `true` is valid, and at registration only for
    /// a discoverable credential. A key without large blobs ignores it, as
    /// it ignores every extension it does not know.
    func largeBlobKeyRequested(_ extensions: CBORMap, residentKey: Bool) throws(CTAP2Status) -> Bool {
        guard configuration.largeBlobArrayLimit > 0, let item = extensions["largeBlobKey"] else { return false }
        guard let wanted = item.boolValue else { throw .cborUnexpectedType }
        guard wanted, residentKey else { throw .invalidOption }
        return true
    }
}

/// A set in progress: the fragments so far, committed only when the last
/// arrives with a valid hash. Forgotten at power-off, as CTAP allows.
struct PendingLargeBlobWrite {
    let expectedLength: Int
    private(set) var buffer: [UInt8] = []
    var nextOffset: Int { buffer.count }

    init(expectedLength: Int) {
        self.expectedLength = expectedLength
        buffer.reserveCapacity(expectedLength)
    }

    mutating func append(_ fragment: [UInt8]) { buffer += fragment }
}

/// The serialized large-blob array's framing: CBOR bytes followed by
/// LEFT(SHA-256(those bytes), 16).
enum LargeBlobArray {
    static let hashLength = 16

    /// A fresh key's array: the empty CBOR array `0x80` and its hash.
    static let initial: [UInt8] = [0x80] + Array(SHA256.hash([0x80]).prefix(hashLength))

    static func hasValidHash(_ serialized: [UInt8]) -> Bool {
        guard serialized.count > hashLength else { return false }
        let body = Array(serialized.dropLast(hashLength))
        return constantTimeEquals(Array(SHA256.hash(body).prefix(hashLength)), Array(serialized.suffix(hashLength)))
    }
}

extension KeyState {
    /// A discoverable credential's largeBlobKey: derived from the master
    /// key, like hmac-secret's CredRandom, so that only whether it has one
    /// is stored; a reset's new master key ends every old one.
    func largeBlobKey(credentialID: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(for: Array("authkeyd largeBlobKey".utf8) + credentialID, key: masterKey)
    }
}
