import AuthProtocol
import FIDO2

/// How one attempt on the key verifies the user.
enum VerificationMethod: Sendable {
    /// Presence only, unless the key insists.
    case none
    /// The key's own sensor (libfido2 asks it for a token: clientPIN 0x06).
    case builtIn
    /// The PIN the user entered.
    case pin(PIN)
}

extension Operation {
    /// Fingerprint attempts before falling back to the PIN (CTAP 2.1's
    /// preferredPlatformUvAttempts for the keys of this kind).
    static let builtInUVAttempts = 3

    /// Runs `attempt` with the user verification the request asks for and
    /// the key can give: built-in UV first where the key has it, then the
    /// PIN (CTAP 2.1 §6.5's platform behaviour); presence only when
    /// verification is not wanted, switching to verification when the key
    /// insists (a PIN-protected key making a discoverable credential,
    /// always-UV). `touchCue` false: the attempt asks the key for no touch
    /// (`up=false`), so no `waitingForTouch` is sent.
    func withUserVerification<T: Sendable>(
        on key: RegisteredKey, preference: UserVerificationRequirement, activity: String, touchCue: Bool = true,
        in broker: isolated Broker, _ attempt: @escaping @Sendable (Device, VerificationMethod) throws(FIDO2Error) -> T
    ) async throws(RPCError) -> T {
        let touchStatus: OperationStatus.Status? = touchCue ? .waitingForTouch : nil
        let supports = key.info.supports
        let pinSet = supports.clientPIN.isOn
        let builtInUV = supports.userVerification.isOn && supports.pinUVAuthToken
        if preference == .required && !pinSet && !builtInUV {
            throw RPCError(.unsupported, "\(activity): user verification is required, but the key has neither a PIN nor a fingerprint set up; set a PIN first")
        }
        // With always-UV on, a presence-only attempt would only be refused.
        let alwaysUV = supports.alwaysUV.isOn
        if (preference == .discouraged && !alwaysUV) || (!pinSet && !builtInUV) {
            if let touchStatus { sendStatus(touchStatus, key: key, in: broker) }
            do {
                return try await perform(key, in: broker) { device throws(FIDO2Error) in try attempt(device, .none) }
            } catch .device(let error) where error == .pinRequired || error == .upRequired {
                // The key wants verification after all: fall through.
            } catch {
                throw error.rpcError(doing: activity)
            }
        }
        // Read again: a key opened for the attempt above may have been found
        // changed by another program meanwhile (a PIN set with fido2-token).
        let now = key.info.supports
        // The attempts left change with every try, right or wrong: what
        // `authenticators.info` shows is read again after them.
        do throws(RPCError) {
            let result = try await verifiedAttempt(
                on: key, builtInUV: now.userVerification.isOn && now.pinUVAuthToken, pinSet: now.clientPIN.isOn,
                activity: activity, touchStatus: touchStatus, in: broker, attempt)
            await refresh(key, in: broker)
            return result
        } catch {
            await refresh(key, in: broker)
            throw error
        }
    }

    /// The user verified by the key's own sensor where it has one, then by
    /// the PIN.
    private func verifiedAttempt<T: Sendable>(
        on key: RegisteredKey, builtInUV: Bool, pinSet: Bool, activity: String, touchStatus: OperationStatus.Status?,
        in broker: isolated Broker, _ attempt: @escaping @Sendable (Device, VerificationMethod) throws(FIDO2Error) -> T
    ) async throws(RPCError) -> T {
        if builtInUV {
            for _ in 0..<Self.builtInUVAttempts {
                sendStatus(.waitingForUv, key: key, in: broker)
                do {
                    return try await perform(key, in: broker) { device throws(FIDO2Error) in try attempt(device, .builtIn) }
                } catch .device(let error) where error == .uvInvalid {
                    continue
                } catch .device(let error) where error == .uvBlocked {
                    break
                } catch {
                    throw error.rpcError(doing: activity)
                }
            }
            guard pinSet else {
                throw RPCError(.uvBlocked, "\(activity): the fingerprint was not recognised, and the key has no PIN to fall back on")
            }
        }
        guard pinSet else {
            throw RPCError(.pinRequired, "\(activity): the key asks for verification, but has no PIN set")
        }
        return try await withPIN(on: key, activity: activity, status: touchStatus, in: broker) { device, pin throws(FIDO2Error) in
            try attempt(device, .pin(pin))
        }
    }

    /// Asks for the PIN (`ui.enterPin`) until it is right, blocked, or the
    /// user cancels; a wrong PIN asks again with `reason: invalid`.
    /// `status` is sent before each attempt (the touch cue, where one comes).
    func withPIN<T: Sendable>(
        on key: RegisteredKey, activity: String, status: OperationStatus.Status? = .waitingForTouch, in broker: isolated Broker,
        _ attempt: @escaping @Sendable (Device, PIN) throws(FIDO2Error) -> T
    ) async throws(RPCError) -> T {
        var reason = EnterPinPrompt.Reason.required
        while true {
            let pin = try await askForPIN(on: key, reason: reason, activity: activity, in: broker)
            if let status { sendStatus(status, key: key, in: broker) }
            do {
                return try await perform(key, in: broker) { device throws(FIDO2Error) in try attempt(device, pin) }
            } catch .device(let error) where error == .pinInvalid {
                let requester = session.requester
                broker.logger.notice("key \(key.id): a wrong PIN from uid \(requester.uid) (\(requester.command), pid \(requester.pid))")
                reason = .invalid
            } catch .device(let error) where error == .pinPolicyViolation {
                throw RPCError(.pinInvalid, "\(activity): the key wants its PIN changed before it is used again", details: ["fido": .string(error.name)])
            } catch {
                throw error.rpcError(doing: activity)
            }
        }
    }

    /// PIN attempts left at which only an administrator may spend them:
    /// another user could otherwise block the key (eight wrong in all),
    /// and its owner lose every credential to the reset.
    static let pinAttemptsReservedForAdmins = 3

    /// One `ui.enterPin`, with the attempts left; a blocked PIN ends the
    /// operation before the user types anything, and so do the last few
    /// attempts for a requester without the admin right.
    func askForPIN(
        on key: RegisteredKey, reason: EnterPinPrompt.Reason, activity: String, in broker: isolated Broker
    ) async throws(RPCError) -> PIN {
        let retries = try? await perform(key, in: broker) { device throws(FIDO2Error) in try device.pinRetries() }
        if retries == 0 { throw RPCError(.pinBlocked, "\(activity): the PIN is blocked; only a reset of the key clears it") }
        if let retries, retries <= Self.pinAttemptsReservedForAdmins, !session.rights.contains(.manage) {
            let requester = session.requester
            broker.logger.notice("key \(key.id): \(retries) PIN attempts left; refused uid \(requester.uid) (\(requester.command), pid \(requester.pid)) the PIN: only an administrator may enter it now")
            throw RPCError(
                .pinAttemptsLow,
                "\(activity): the key has only \(retries) PIN attempt\(retries == 1 ? "" : "s") left, which only an administrator may use (allow-admins in authkeyd.conf(5)); ask one to enter the PIN, which restores the attempts",
                details: ["retries": .integer(Int64(retries))])
        }
        let reply = try await prompt(
            .enterPin(EnterPinPrompt(
                operation: info, authenticator: broker.wire(key), reason: reason, retries: retries,
                minLength: Int(key.info.minPINLength))),
            in: broker)
        guard let text = reply.pin, !text.isEmpty else {
            throw RPCError(.cancelled, "\(activity): the client proceeded without a PIN")
        }
        return PIN(text)
    }
}
