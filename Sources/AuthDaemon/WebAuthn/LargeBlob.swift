import AuthProtocol
import Crypto
import FIDO2
import SystemKit

/// WebAuthn's `largeBlob` extension (Level 3 §10.1.5) at registration, in
/// CTAP terms (CTAP 2.1 §12.3): the largeBlobKey extension, which keys make
/// only for discoverable credentials. `supported` is whether the key
/// returned a largeBlobKey for the new credential.
struct LargeBlobSupport: Sendable {
    /// `support: "required"`: only keys with large blobs are offered.
    let required: Bool

    /// nil when the request has no `largeBlob`.
    init?(_ inputs: LargeBlobInputs?, residentKey: ResidentKeyRequirement) throws(RPCError) {
        guard let inputs else { return nil }
        guard inputs.read == nil, inputs.write == nil else {
            throw RPCError(.invalidParams, "invalid params: extensions.largeBlob: read and write belong to credentials.get; at registration only support is allowed")
        }
        switch inputs.support ?? "preferred" {
        case "required": required = true
        case "preferred": required = false
        case let other:
            throw RPCError(.invalidParams, "invalid params: extensions.largeBlob.support: \"required\" or \"preferred\", not \"\(other)\"")
        }
        if required && residentKey == .discouraged {
            throw RPCError(.invalidParams, "invalid params: extensions.largeBlob: support \"required\" needs a discoverable credential; set authenticatorSelection.residentKey to \"required\"")
        }
    }

    /// Whether `key` can serve the request: with `required`, only a key
    /// whose getInfo lists large blobs (`KeyRequirements` asks).
    func serves(_ key: RegisteredKey) -> Bool { !required || key.info.storesLargeBlobs }

    /// Keys are present, but none of them stores large blobs.
    static let noKeyStoresLargeBlobs = RPCError(
        .unsupported,
        "extensions.largeBlob: support \"required\", but no key present stores large blobs (getInfo option largeBlobs); use such a key, or ask with support \"preferred\"")

    /// The key named in the request does not store large blobs.
    static func refusal(of key: RegisteredKey) -> RPCError {
        RPCError(.unsupported, "extensions.largeBlob: support \"required\", but the key \(key.product) does not store large blobs")
    }

    /// `clientExtensionResults.largeBlob`.
    static func results(for credential: Credential) -> JSONValue {
        var key = credential.largeBlobKey
        defer { zeroSecret(&key) }
        return ["supported": .bool(key.count == 32)]
    }
}

/// WebAuthn's `largeBlob` at authentication: after the assertion, the
/// blob stored under the credential's largeBlobKey is read (no
/// verification needed) or replaced (on a key protected by user
/// verification, with a pinUvAuthToken carrying the `lbw` permission, so
/// the write verifies the user; on a key with neither PIN nor fingerprint,
/// without one, as CTAP 2.1 §6.10.2 says).
///
/// The key and the blob are secrets of the relying party: neither is
/// logged, and the key is zeroed once used.
final class LargeBlobAccess: Sendable {
    enum Access: Sendable, Equatable {
        case read
        case write([UInt8])
    }

    let access: Access
    private let logger: Logger
    /// What each credential's read or write gave, by credential id: a key
    /// without an allow list answers for every account the chooser offers.
    private let outcomes = Protected<[[UInt8]: JSONObject]>([:])

    /// nil when the request has no `largeBlob`, or only `read: false`. A
    /// write names its credential: WebAuthn asks for exactly one in
    /// allowCredentials.
    init?(_ inputs: LargeBlobInputs?, allowList: [[UInt8]], logger: Logger) throws(RPCError) {
        guard let inputs else { return nil }
        self.logger = logger
        guard inputs.support == nil else {
            throw RPCError(.invalidParams, "invalid params: extensions.largeBlob.support belongs to credentials.create; here use read or write")
        }
        switch (inputs.read ?? false, inputs.write) {
        case (true, .some):
            throw RPCError(.invalidParams, "invalid params: extensions.largeBlob: read and write together; ask for one of them")
        case (true, nil): access = .read
        case (false, .some(let blob)):
            guard !blob.bytes.isEmpty else {
                throw RPCError(.invalidParams, "invalid params: extensions.largeBlob.write: an empty blob; give at least one byte")
            }
            guard allowList.count == 1 else {
                throw RPCError(.invalidParams, "invalid params: extensions.largeBlob.write needs exactly one credential in allowCredentials (it has \(allowList.count)); name the credential whose blob to replace")
            }
            access = .write(blob.bytes)
        case (false, nil): return nil
        }
    }

    /// Before a key is chosen, a write asks for verification: a key that
    /// speaks only U2F, which cannot give it, has no large blobs either.
    func verification(_ requested: UserVerificationRequirement) -> UserVerificationRequirement {
        if case .write = access { return .required }
        return requested
    }

    /// On the chosen key, a write verifies the user where the key takes it
    /// only with a pinUvAuthToken (`writesNeedVerification`); a key with
    /// neither PIN nor fingerprint takes it without, so the request's own
    /// preference stands.
    func verification(_ requested: UserVerificationRequirement, on key: RegisteredKey) -> UserVerificationRequirement {
        key.info.largeBlobWritesNeedVerification ? verification(requested) : requested
    }

    /// Refuses, before the key is touched, a write the chosen key cannot
    /// take: a blob over its maxSerializedLargeBlobArray.
    func check(_ key: RegisteredKey) throws(RPCError) {
        guard case .write(let blob) = access, key.info.storesLargeBlobs else { return }
        let limit = key.info.maxLargeBlobArray
        if UInt64(blob.count) > limit {
            throw RPCError(.invalidParams, "invalid params: extensions.largeBlob.write: \(blob.count) bytes, but the key \(key.product) stores at most \(limit) bytes of large blobs (maxSerializedLargeBlobArray) for all its credentials together")
        }
    }

    /// Reads or writes with the statement's largeBlobKey, on the device the
    /// assertion came from, and zeroes the key in the statement. `pin` is
    /// the PIN the assertion was verified with (nil: the key's sensor).
    func run(on device: Device, statement: inout AssertionStatement, pin: PIN?) {
        var key = statement.largeBlobKey
        zeroSecret(&statement.largeBlobKey)
        statement.largeBlobKey = []
        defer { zeroSecret(&key) }
        let result: JSONObject
        switch access {
        case .read:
            do throws(FIDO2Error) {
                guard key.count == 32, var blob = try device.largeBlob(key: key) else {
                    result = [:]
                    break
                }
                result = ["blob": .string(Base64URL.encode(blob))]
                zeroSecret(&blob)
            } catch {
                logger.notice("largeBlob: the read from the key failed: \(error.name)")
                result = [:]
            }
        case .write(let blob):
            guard key.count == 32 else {
                result = ["written": false]
                break
            }
            do throws(FIDO2Error) {
                try device.setLargeBlob(blob, key: key, pin: pin)
                result = ["written": true]
            } catch {
                // WebAuthn reports a failed write as written: false; the
                // reason (never the blob or the key) goes to the log.
                logger.notice("largeBlob: the write to the key failed: \(error.name)")
                result = ["written": false]
            }
        }
        outcomes.withLock { $0[statement.credentialID] = result }
    }

    /// `clientExtensionResults.largeBlob` of the credential that signed:
    /// `{blob}` (absent when none is stored, or the key has no large
    /// blobs), or `{written}`.
    func results(for credentialID: [UInt8]) -> JSONValue { .object(outcomes.withLock { $0[credentialID] ?? [:] }) }
}

extension AuthenticatorInfo {
    /// getInfo's `largeBlobs` option with the largeBlobKey extension.
    var storesLargeBlobs: Bool { supports.largeBlobs && extensions.contains("largeBlobKey") }

    /// CTAP 2.1 §6.10.2: a key protected by some form of user verification
    /// (a PIN, a fingerprint set up), or with alwaysUv, takes a write of
    /// its large-blob array only with a pinUvAuthToken.
    var largeBlobWritesNeedVerification: Bool {
        supports.clientPIN.isOn || supports.userVerification.isOn || supports.alwaysUV.isOn
    }
}
