import AuthProtocol

/// The key-management methods as Swift calls. Each needs the caller to be
/// one of the daemon's admins; PINs are asked through the UI set with
/// `setUI` (`enterPIN` with reasons `current`, `new`, `newRejected`), never
/// passed here. `onStatus` sees the touch cue and, while enrolling, each
/// captured fingerprint sample.
extension AuthClient {
    /// Sets the first PIN of a key that has none; returns the key as it is now.
    public func setPIN(on authenticator: String) async throws(AuthClientError) -> Authenticator {
        try await call(ManagementMethod.setPin, AuthenticatorParams(authenticator: authenticator), as: AuthenticatorEvent.self)
            .authenticator
    }

    public func changePIN(on authenticator: String) async throws(AuthClientError) -> Authenticator {
        try await call(ManagementMethod.changePin, AuthenticatorParams(authenticator: authenticator), as: AuthenticatorEvent.self)
            .authenticator
    }

    public func retries(on authenticator: String) async throws(AuthClientError) -> RetriesResult {
        try await call(ManagementMethod.pinRetries, AuthenticatorParams(authenticator: authenticator), as: RetriesResult.self)
    }

    /// Erases the key. `confirm` is its product name as the user typed it.
    public func reset(
        _ authenticator: String, confirm: String, onStatus: (@Sendable (OperationStatus) -> Void)? = nil
    ) async throws(AuthClientError) -> Authenticator {
        try await call(
            ManagementMethod.reset, ResetParams(authenticator: authenticator, confirm: confirm), as: AuthenticatorEvent.self,
            onStatus: onStatus
        ).authenticator
    }

    /// The discoverable credentials on `authenticator`; nil lets the daemon
    /// choose among the keys that can list theirs (the result names it).
    public func storedCredentials(on authenticator: String?, rpId: String? = nil) async throws(AuthClientError) -> StoredCredentials {
        try await call(
            ManagementMethod.listCredentials, ListCredentialsParams(authenticator: authenticator, rpId: rpId),
            as: StoredCredentials.self)
    }

    public func deleteStoredCredential(_ credentialId: String, on authenticator: String) async throws(AuthClientError) {
        _ = try await call(
            ManagementMethod.deleteCredential, params: encodeParams(CredentialParams(authenticator: authenticator, credentialId: credentialId)))
    }

    public func updateStoredCredentialUser(
        _ credentialId: String, on authenticator: String, user: StoredCredentials.User
    ) async throws(AuthClientError) {
        _ = try await call(
            ManagementMethod.updateCredentialUser,
            params: encodeParams(UpdateUserParams(authenticator: authenticator, credentialId: credentialId, user: user)))
    }

    public func fingerprintSensor(on authenticator: String) async throws(AuthClientError) -> FingerprintSensor {
        try await call(ManagementMethod.fingerprintSensor, AuthenticatorParams(authenticator: authenticator), as: FingerprintSensor.self)
    }

    /// Enrolls a finger: `onStatus` sees `waitingForTouch` before each
    /// sample and `sampleCaptured` (with `remainingSamples`) after it.
    public func enrollFingerprint(
        on authenticator: String, name: String? = nil, onStatus: (@Sendable (OperationStatus) -> Void)? = nil
    ) async throws(AuthClientError) -> Fingerprint {
        try await call(
            ManagementMethod.enrollFingerprint, EnrollParams(authenticator: authenticator, name: name), as: Fingerprint.self,
            onStatus: onStatus)
    }

    public func fingerprints(on authenticator: String) async throws(AuthClientError) -> [Fingerprint] {
        try await call(ManagementMethod.listFingerprints, AuthenticatorParams(authenticator: authenticator), as: FingerprintList.self)
            .fingerprints
    }

    public func renameFingerprint(_ templateId: String, on authenticator: String, to name: String) async throws(AuthClientError) -> Fingerprint {
        try await call(
            ManagementMethod.renameFingerprint, FingerprintParams(authenticator: authenticator, templateId: templateId, name: name),
            as: Fingerprint.self)
    }

    public func deleteFingerprint(_ templateId: String, on authenticator: String) async throws(AuthClientError) {
        _ = try await call(
            ManagementMethod.deleteFingerprint, params: encodeParams(FingerprintParams(authenticator: authenticator, templateId: templateId)))
    }

    public func setAlwaysUV(_ enabled: Bool, on authenticator: String) async throws(AuthClientError) -> Authenticator {
        try await call(
            ManagementMethod.setAlwaysUv, AlwaysUvParams(authenticator: authenticator, enabled: enabled), as: AuthenticatorEvent.self
        ).authenticator
    }

    public func setMinimumPINLength(
        _ length: Int?, on authenticator: String, rpIds: [String]? = nil, forceChange: Bool? = nil
    ) async throws(AuthClientError) -> Authenticator {
        try await call(
            ManagementMethod.setMinPinLength,
            MinPinLengthParams(authenticator: authenticator, length: length, rpIds: rpIds, forceChange: forceChange),
            as: AuthenticatorEvent.self
        ).authenticator
    }
}
