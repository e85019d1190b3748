import Crypto
import SystemKit

/// Permissions a pinUvAuthToken can carry (CTAP 2.1 §6.5.5.7).
struct TokenPermissions: OptionSet {
    let rawValue: UInt8
    static let makeCredential = TokenPermissions(rawValue: 0x01)
    static let getAssertion = TokenPermissions(rawValue: 0x02)
    static let credentialManagement = TokenPermissions(rawValue: 0x04)
    static let bioEnrollment = TokenPermissions(rawValue: 0x08)
    static let largeBlobWrite = TokenPermissions(rawValue: 0x10)
    static let authenticatorConfig = TokenPermissions(rawValue: 0x20)
}

/// The key's one pinUvAuthToken and its state (CTAP 2.1 §6.5.2.1): random
/// bytes new at every power-up and every issuance, the permissions and
/// relying party it is bound to, and whether it still vouches for user
/// presence and verification.
struct PINUVAuthToken {
    private(set) var value = secureRandomBytes(32)
    private(set) var inUse = false
    var permissions: TokenPermissions = []
    var permissionsRPID: String?
    private(set) var userPresent = false
    private(set) var userVerified = false
    private var startedAt = ContinuousClock.now
    private var usableUntil = ContinuousClock.now

    /// Unused for this long after issuance, the token expires.
    static let initialUsageLimit: Duration = .seconds(30)
    /// However often it is used, it expires this long after issuance.
    static let maximumUsagePeriod: Duration = .seconds(600)

    /// `resetPinUvAuthToken`: new random bytes, every old token dead.
    mutating func reset() {
        zeroSecret(&value)
        self = PINUVAuthToken()
    }

    /// `beginUsingPinUvAuthToken`.
    mutating func beginUsing(userIsPresent: Bool) {
        userPresent = userIsPresent
        userVerified = true
        inUse = true
        startedAt = .now
        usableUntil = startedAt + Self.initialUsageLimit
    }

    /// `stopUsingPinUvAuthToken`.
    mutating func stopUsing() {
        inUse = false
        permissions = []
        permissionsRPID = nil
        userPresent = false
        userVerified = false
    }

    /// Expires the token when its time is up; call before each use.
    mutating func expireIfDue() {
        if inUse && ContinuousClock.now > usableUntil { stopUsing() }
    }

    /// Checks `signature` over `message` with the token; a token not in use
    /// verifies nothing. A successful check extends the token's life.
    mutating func verify(_ message: [UInt8], signature: [UInt8], protocol: PINUVAuthProtocol) -> Bool {
        expireIfDue()
        guard inUse, `protocol`.verify(message, signature: signature, key: value) else { return false }
        usableUntil = min(startedAt + Self.maximumUsagePeriod, ContinuousClock.now + Self.initialUsageLimit)
        return true
    }

    var userPresentFlag: Bool { inUse && userPresent }
    var userVerifiedFlag: Bool { inUse && userVerified }

    /// After a makeCredential or getAssertion: the token no longer vouches
    /// for presence or verification and keeps only largeBlobWrite.
    mutating func spendForCredentialOperation() {
        userPresent = false
        userVerified = false
        permissions = permissions.intersection(.largeBlobWrite)
    }
}
