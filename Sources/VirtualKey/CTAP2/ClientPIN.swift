import CBOR
import Crypto
import SystemKit

/// authenticatorClientPIN (CTAP 2.1 §6.5): PIN retries, key agreement,
/// setting and changing the PIN, and issuing pinUvAuthTokens for a PIN or a
/// fingerprint.
extension Authenticator {
    private enum Subcommand: UInt64 {
        case getPINRetries = 0x01
        case getKeyAgreement = 0x02
        case setPIN = 0x03
        case changePIN = 0x04
        case getPINToken = 0x05
        case getTokenUsingUV = 0x06
        case getUVRetries = 0x07
        case getTokenUsingPIN = 0x09
    }

    func clientPIN(_ parameters: Parameters, context: CommandContext) throws(CTAP2Status) -> CBORMap? {
        let subcommandValue = try parameters.required(try parameters.unsigned(0x02))
        guard let subcommand = Subcommand(rawValue: subcommandValue) else { throw .invalidSubcommand }
        switch subcommand {
        case .getPINRetries:
            // CTAP 2.1 names no error here, but the keys hosts are tested
            // against (YubiKeys, in python-fido2's device suite) answer
            // PIN_NOT_SET while no PIN is set: there is nothing to count.
            guard state.isPINSet else { throw .pinNotSet }
            return [0x03: .int(state.pinRetries), 0x04: .bool(volatile.consecutivePINFailures >= 3)]
        case .getUVRetries:
            guard configuration.fingerprintSensor else { throw .invalidSubcommand }
            return [0x05: .int(state.uvRetries)]
        case .getKeyAgreement:
            let chosen = try authProtocol(try parameters.unsigned(0x01))
            return [0x01: COSEKey.keyAgreement(volatile.keyAgreement[chosen]!.publicKey)]
        case .setPIN:
            try setPIN(parameters)
            return nil
        case .changePIN:
            try changePIN(parameters)
            return nil
        case .getPINToken:
            return try issueTokenForPIN(parameters, withPermissions: false)
        case .getTokenUsingPIN:
            return try issueTokenForPIN(parameters, withPermissions: true)
        case .getTokenUsingUV:
            return try issueTokenForUV(parameters, context: context)
        }
    }

    // MARK: setPIN and changePIN

    private func setPIN(_ parameters: Parameters) throws(CTAP2Status) {
        let chosen = try authProtocol(try parameters.unsigned(0x01))
        let platformKey = try parameters.required(parameters.item(0x03))
        let newPINEncrypted = try parameters.required(try parameters.bytes(0x05))
        let authParameter = try parameters.required(try parameters.bytes(0x04))
        guard !state.isPINSet else { throw .pinAuthInvalid }
        let shared = try sharedSecret(chosen, platformKey: platformKey)
        guard chosen.verify(newPINEncrypted, signature: authParameter, key: shared) else { throw .pinAuthInvalid }
        var newPIN = try decryptNewPIN(newPINEncrypted, shared: shared, protocol: chosen)
        defer { zeroSecret(&newPIN) }
        try Self.validateNewPIN(newPIN, minimumLength: state.minPINLength)
        state.setPIN(newPIN)
        try persist()
    }

    private func changePIN(_ parameters: Parameters) throws(CTAP2Status) {
        let chosen = try authProtocol(try parameters.unsigned(0x01))
        let platformKey = try parameters.required(parameters.item(0x03))
        let pinHashEncrypted = try parameters.required(try parameters.bytes(0x06))
        let newPINEncrypted = try parameters.required(try parameters.bytes(0x05))
        let authParameter = try parameters.required(try parameters.bytes(0x04))
        guard state.isPINSet else { throw .pinNotSet }
        try checkPINNotBlocked()
        let shared = try sharedSecret(chosen, platformKey: platformKey)
        guard chosen.verify(newPINEncrypted + pinHashEncrypted, signature: authParameter, key: shared) else {
            throw .pinAuthInvalid
        }
        try verifyPINHash(pinHashEncrypted, shared: shared, protocol: chosen)
        var newPIN = try decryptNewPIN(newPINEncrypted, shared: shared, protocol: chosen)
        defer { zeroSecret(&newPIN) }
        try Self.validateNewPIN(newPIN, minimumLength: state.minPINLength)
        if state.forcePINChange, constantTimeEquals(KeyState.pinHash(newPIN), state.pinHash ?? []) {
            throw .pinPolicyViolation
        }
        state.setPIN(newPIN)
        state.forcePINChange = false
        try persist()
        volatile.token.reset()
    }

    // MARK: Tokens

    private func issueTokenForPIN(_ parameters: Parameters, withPermissions: Bool) throws(CTAP2Status) -> CBORMap {
        let chosen = try authProtocol(try parameters.unsigned(0x01))
        let platformKey = try parameters.required(parameters.item(0x03))
        let pinHashEncrypted = try parameters.required(try parameters.bytes(0x06))
        var permissions: TokenPermissions = [.makeCredential, .getAssertion]
        var rpID: String?
        if withPermissions {
            permissions = try requestedPermissions(parameters)
            rpID = try parameters.text(0x0A)
            try checkPermissionsAllowed(permissions, viaUV: false)
        } else if parameters.contains(0x09) || parameters.contains(0x0A) {
            throw .invalidParameter
        }
        guard state.isPINSet else { throw .pinNotSet }
        try checkPINNotBlocked()
        let shared = try sharedSecret(chosen, platformKey: platformKey)
        try verifyPINHash(pinHashEncrypted, shared: shared, protocol: chosen)
        if state.forcePINChange { throw withPermissions ? .pinPolicyViolation : .pinInvalid }
        return try issueToken(permissions: permissions, rpID: rpID, userPresent: false, shared: shared, protocol: chosen)
    }

    private func issueTokenForUV(_ parameters: Parameters, context: CommandContext) throws(CTAP2Status) -> CBORMap {
        let chosen = try authProtocol(try parameters.unsigned(0x01))
        let platformKey = try parameters.required(parameters.item(0x03))
        let permissions = try requestedPermissions(parameters)
        let rpID = try parameters.text(0x0A)
        try checkPermissionsAllowed(permissions, viaUV: true)
        guard configuration.fingerprintSensor else { throw .invalidSubcommand }
        guard isBuiltInUVConfigured else { throw .notAllowed }
        guard state.uvRetries > 0 else { throw .uvBlocked }
        let shared = try sharedSecret(chosen, platformKey: platformKey)
        try performBuiltInUV(context, mismatch: .uvInvalid)
        // A finger on the sensor is a touch too.
        return try issueToken(permissions: permissions, rpID: rpID, userPresent: true, shared: shared, protocol: chosen)
    }

    private func requestedPermissions(_ parameters: Parameters) throws(CTAP2Status) -> TokenPermissions {
        let value = try parameters.required(try parameters.unsigned(0x09))
        let permissions = TokenPermissions(rawValue: UInt8(truncatingIfNeeded: value))
        guard value != 0, value <= 0xFF else { throw .invalidParameter }
        if !permissions.isDisjoint(with: [.makeCredential, .getAssertion]), !parameters.contains(0x0A) {
            throw .invalidParameter
        }
        return permissions
    }

    /// Permissions for features this key lacks are refused; bio enrollment
    /// and config need a PIN-based token (no uvBioEnroll, no uvAcfg).
    private func checkPermissionsAllowed(_ permissions: TokenPermissions, viaUV: Bool) throws(CTAP2Status) {
        if permissions.contains(.largeBlobWrite) && configuration.largeBlobArrayLimit == 0 { throw .unauthorizedPermission }
        if permissions.contains(.bioEnrollment) && (!configuration.fingerprintSensor || viaUV) {
            throw .unauthorizedPermission
        }
        if permissions.contains(.authenticatorConfig) && viaUV { throw .unauthorizedPermission }
    }

    private func issueToken(
        permissions: TokenPermissions, rpID: String?, userPresent: Bool, shared: [UInt8], protocol chosen: PINUVAuthProtocol
    ) throws(CTAP2Status) -> CBORMap {
        volatile.token.reset()
        volatile.token.beginUsing(userIsPresent: userPresent)
        volatile.token.permissions = permissions
        volatile.token.permissionsRPID = rpID
        return [0x02: .bytes(try chosen.encrypt(volatile.token.value, sharedSecret: shared))]
    }

    // MARK: Helpers

    private func sharedSecret(_ chosen: PINUVAuthProtocol, platformKey: CBOR) throws(CTAP2Status) -> [UInt8] {
        let platform = try COSEKey.platformKey(platformKey)
        return try chosen.sharedSecret(keyAgreement: volatile.keyAgreement[chosen]!, platformKey: platform)
    }

    private func checkPINNotBlocked() throws(CTAP2Status) {
        guard state.pinRetries > 0 else { throw .pinBlocked }
        guard volatile.consecutivePINFailures < 3 else { throw .pinAuthBlocked }
    }

    /// Checks a PIN hash, spending one retry first so that pulling the plug
    /// mid-check cannot give free guesses. A wrong PIN also renews the
    /// key-agreement key; three in a row block PINs until a power cycle.
    private func verifyPINHash(_ encrypted: [UInt8], shared: [UInt8], protocol chosen: PINUVAuthProtocol) throws(CTAP2Status) {
        state.pinRetries -= 1
        try persist()
        let decrypted = try? chosen.decrypt(encrypted, sharedSecret: shared)
        guard let decrypted, decrypted.count == 16, let stored = state.pinHash, constantTimeEquals(decrypted, stored) else {
            volatile.regenerateKeyAgreement(chosen)
            if state.pinRetries == 0 { throw .pinBlocked }
            volatile.consecutivePINFailures += 1
            throw volatile.consecutivePINFailures >= 3 ? .pinAuthBlocked : .pinInvalid
        }
        state.pinRetries = KeyState.maxPINRetries
        // A correct PIN also unblocks the fingerprint sensor.
        state.uvRetries = KeyState.maxUVRetries
        volatile.consecutivePINFailures = 0
        try persist()
    }

    /// newPinEnc holds the PIN padded with zeros to 64 bytes.
    private func decryptNewPIN(_ encrypted: [UInt8], shared: [UInt8], protocol chosen: PINUVAuthProtocol) throws(CTAP2Status) -> [UInt8] {
        guard var padded = try? chosen.decrypt(encrypted, sharedSecret: shared) else { throw .pinAuthInvalid }
        defer { zeroSecret(&padded) }
        guard padded.count == 64 else { throw .invalidParameter }
        var end = padded.count
        while end > 0 && padded[end - 1] == 0 { end -= 1 }
        return Array(padded[0..<end])
    }

    /// At least `minimumLength` code points, at most 63 bytes, valid UTF-8.
    static func validateNewPIN(_ pin: [UInt8], minimumLength: Int) throws(CTAP2Status) {
        guard pin.count <= 63, let text = String(validating: pin, as: UTF8.self),
            text.unicodeScalars.count >= minimumLength
        else { throw .pinPolicyViolation }
    }
}

extension KeyState {
    static func pinHash(_ pin: [UInt8]) -> [UInt8] { Array(SHA256.hash(pin).prefix(16)) }

    mutating func setPIN(_ pin: [UInt8]) {
        pinHash = Self.pinHash(pin)
        pinLength = String(decoding: pin, as: UTF8.self).unicodeScalars.count
        pinRetries = Self.maxPINRetries
    }
}
