import AuthProtocol
import Dispatch
import FIDO2

/// What the daemon does with a key that speaks only U2F (CTAP1; its
/// getInfo is `AuthenticatorInfo.u2fOnly`, and the protocol lists it with
/// `ctap: "u2f"`). It behaves as a browser's WebAuthn client does with such
/// a key:
///
/// - refused early, with `unsupported` and the reason: a discoverable
///   credential required (`residentKey: "required"`), user verification
///   required, a `credentials.get` without `allowCredentials` (that would
///   need a discoverable credential) or with `userPresence: false` (U2F
///   always asks for a touch), credProtect enforced above
///   `userVerificationOptional`, and every key-management method (no PIN,
///   no stored credentials, no fingerprints, no settings, no reset);
/// - dropped silently, as a browser drops an extension the key cannot
///   process: hmac-secret (`hmacCreateSecret` answers false), credBlob
///   (`credBlob` false, `getCredBlob` left out), credProtect when not
///   enforced, minPinLength; `credProps` answers `rk: false`; a `preferred`
///   resident key is made non-discoverable.
enum U2FOnlyKey {
    static let speaksOnlyU2F = "the key speaks only U2F (CTAP1)"

    /// Why `credentials.create` cannot be served by this key, if it cannot.
    static func refusal(of plan: RegistrationPlan, extensions: CreateExtensions?) -> RPCError? {
        if plan.residentKey == .required {
            return RPCError(.unsupported, "registering: residentKey \"required\": \(speaksOnlyU2F), which keeps no discoverable credentials; use a FIDO2 key, or ask for \"preferred\" or \"discouraged\"")
        }
        if plan.verification == .required {
            return RPCError(.unsupported, "registering: userVerification \"required\": \(speaksOnlyU2F), which cannot verify the user (no PIN, no fingerprint); use a FIDO2 key, or ask for \"preferred\"")
        }
        if extensions?.enforceCredentialProtectionPolicy == true,
            let policy = extensions?.credentialProtectionPolicy, policy != "userVerificationOptional"
        {
            return RPCError(.unsupported, "registering: credentialProtectionPolicy \"\(policy)\" is enforced, but \(speaksOnlyU2F), which cannot protect a credential; use a FIDO2 key, or do not enforce it")
        }
        return nil
    }

    /// Why `credentials.get` cannot be served by this key, if it cannot.
    /// A U2F key signs only after a touch: libfido2's U2F path signs with
    /// AUTHENTICATE "enforce-user-presence", and asked for up=false it only
    /// checks the handle ("check-only") and answers
    /// FIDO_ERR_USER_PRESENCE_REQUIRED. So a request for a signature
    /// without a touch (`userPresence: false`) is refused at once, with
    /// the reason, instead of ending in that device error.
    static func refusal(allowList: [[UInt8]], verification: UserVerificationRequirement, presence: Bool) -> RPCError? {
        if !presence {
            return RPCError(.unsupported, "authenticating: userPresence false: \(speaksOnlyU2F), which signs only after a touch; use a FIDO2 key, or ask for the touch")
        }
        if allowList.isEmpty {
            return RPCError(.unsupported, "authenticating: no allowCredentials, so the key would have to find a discoverable credential, and \(speaksOnlyU2F), which keeps none; pass the credential ids in allowCredentials")
        }
        if verification == .required {
            return RPCError(.unsupported, "authenticating: userVerification \"required\": \(speaksOnlyU2F), which cannot verify the user (no PIN, no fingerprint); use a FIDO2 key, or ask for \"preferred\"")
        }
        return nil
    }

    /// Why a key-management method cannot be served by this key.
    static func managementRefusal(_ method: String) -> RPCError {
        RPCError(.unsupported, "\(method): \(speaksOnlyU2F), which has no PIN, no stored credentials, no fingerprints and no settings to manage, and cannot be reset by a host")
    }

    /// The keys to offer for a request: without the U2F-only keys that
    /// would refuse it, as long as another key is left to serve it (a
    /// browser does not offer them either). With only such keys present
    /// they stay, so that the request is refused with the reason.
    static func offered(_ keys: [RegisteredKey], refusing refusal: RPCError?) -> [RegisteredKey] {
        guard refusal != nil else { return keys }
        let able = keys.filter { !$0.info.isU2FOnly }
        return able.isEmpty ? keys : able
    }

    /// A registration as U2F can make it: non-discoverable, without the
    /// CTAP2 extensions (libfido2's U2F path refuses a request with any).
    static func fitted(_ request: MakeCredentialRequest, to key: RegisteredKey) -> MakeCredentialRequest {
        guard key.info.isU2FOnly else { return request }
        var fitted = request
        fitted.residentKey = .keyDefault
        fitted.userVerification = .keyDefault
        fitted.hmacSecret = false
        fitted.credentialProtection = nil
        fitted.credentialBlob = nil
        fitted.minPINLength = false
        fitted.largeBlobKey = false
        return fitted
    }

    /// An assertion request as U2F can serve it: without extensions.
    static func fitted(_ request: GetAssertionRequest, to key: RegisteredKey) -> GetAssertionRequest {
        guard key.info.isU2FOnly else { return request }
        var fitted = request
        fitted.hmacSalt = nil
        fitted.largeBlobKey = false
        fitted.credentialBlob = false
        return fitted
    }
}

extension Operation {
    /// How long one libfido2 call on a U2F-only key may poll for a touch.
    static let u2fPollSlice: Duration = .seconds(1)

    /// `perform` for a U2F-only key. libfido2 asks such a key for its touch
    /// by polling (REGISTER or AUTHENTICATE again every 100 ms until it
    /// stops answering 0x6985), and `fido_dev_cancel` cannot stop that
    /// (it needs CTAP2). So the wait is cut into calls of `u2fPollSlice`
    /// each: a cancelled operation ends within one, and the key is free
    /// for the next. A slice that runs out ends in `FIDO_ERR_RX`, after
    /// which the key's worker opens it again on a new channel, so that the
    /// last poll's late answer cannot be taken for the next one's. (A key
    /// another program has is waited for within the slice, and again in
    /// the next.)
    func performPolling<T: Sendable>(
        _ key: RegisteredKey, in broker: isolated Broker, _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDOFailure) -> T {
        while true {
            do { try checkCancelled() } catch { throw .cancelled(error) }
            let remaining = self.remaining
            let slice = min(remaining, Self.u2fPollSlice)
            do throws(FIDO2Error) {
                return try await call(key, until: .now() + .milliseconds(slice.wholeMilliseconds), in: broker, body)
            } catch {
                if let reason = request.cancellation { throw .cancelled(reason) }
                guard error == .rx || error.isKeyBusy else { throw .device(error) }
                // The time is up: nobody touched the key (or another program kept it).
                if remaining <= Self.u2fPollSlice { throw .device(error.isKeyBusy ? error : .actionTimeout) }
            }
        }
    }
}
