import AuthProtocol
import FIDO2

extension Broker {
    /// `authenticators.setPin`: the first PIN of a key that has none, asked
    /// for with `ui.enterPin` (`reason: new`), asked again while the key
    /// refuses it (`newRejected`: too short for the key's minimum, too long).
    func setPIN(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let target = try decode(AuthenticatorParams.self, params).authenticator
        return try manage(ManagementMethod.setPin, key: target, id: id, session: session) { [self] operation, key throws(RPCError) in
            guard key.info.supports.clientPIN == .off else {
                throw key.info.supports.clientPIN == .absent
                    ? RPCError(.unsupported, "the key has no PIN support")
                    : RPCError(.notAllowed, "the key has a PIN already; change it instead")
            }
            let activity = "setting the PIN"
            var new = try await operation.askForNewPIN(on: key, reason: .new, activity: activity, in: self)
            while true {
                do throws(FIDOFailure) {
                    try await operation.perform(key, in: self) { [new] device throws(FIDO2Error) in try device.setPIN(new) }
                    return .changedKey
                } catch .device(let error) where error == .pinPolicyViolation {
                    new = try await operation.askForNewPIN(on: key, reason: .newRejected, activity: activity, in: self)
                } catch {
                    throw error.rpcError(doing: activity)
                }
            }
        }
    }

    /// `authenticators.changePin`: the current PIN (`reason: current`), then
    /// the new one (`new`). A wrong current PIN asks for it again
    /// (`invalid`, the key spent an attempt) and keeps the new one; a new
    /// PIN the key refuses asks for another (`newRejected`).
    func changePIN(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let target = try decode(AuthenticatorParams.self, params).authenticator
        return try manage(ManagementMethod.changePin, key: target, id: id, session: session) { [self] operation, key throws(RPCError) in
            guard key.info.supports.clientPIN.isOn else {
                throw RPCError(.pinRequired, "the key has no PIN yet; set one (authenticators.setPin)")
            }
            let activity = "changing the PIN"
            var current = try await operation.askForPIN(on: key, reason: .current, activity: activity, in: self)
            var new = try await operation.askForNewPIN(on: key, reason: .new, activity: activity, in: self)
            while true {
                do throws(FIDOFailure) {
                    try await operation.perform(key, in: self) { [current, new] device throws(FIDO2Error) in
                        try device.changePIN(from: current, to: new)
                    }
                    return .changedKey
                } catch .device(let error) where error == .pinInvalid {
                    current = try await operation.askForPIN(on: key, reason: .invalid, activity: activity, in: self)
                } catch .device(let error) where error == .pinPolicyViolation {
                    new = try await operation.askForNewPIN(on: key, reason: .newRejected, activity: activity, in: self)
                } catch {
                    throw error.rpcError(doing: activity)
                }
            }
        }
    }

    /// The PIN attempts left, or nil while the key has no PIN: YubiKeys
    /// (and the virtual key) answer PIN_NOT_SET then, having nothing to count.
    private static func pinRetriesIfSet(_ device: Device) throws(FIDO2Error) -> Int? {
        do { return try device.pinRetries() } catch where error == .pinNotSet { return nil }
    }

    /// `authenticators.pinRetries`: PIN and fingerprint attempts left.
    func pinRetries(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let target = try decode(AuthenticatorParams.self, params).authenticator
        return try manage(ManagementMethod.pinRetries, key: target, id: id, session: session) { [self] operation, key throws(RPCError) in
            let info = key.info
            let retries = try await operation.perform(key, in: self) { device throws(FIDO2Error) -> Retries in
                Retries(
                    pin: info.supports.clientPIN.isSupported ? try Self.pinRetriesIfSet(device) : nil,
                    uv: info.supports.userVerification.isSupported ? try device.uvRetries() : nil)
            } mapError: { $0.rpcError(doing: "reading the retries") }
            return .value(encode(RetriesResult(pinRetries: retries.pin, uvRetries: retries.uv)))
        }
    }
}

extension Operation {
    /// Asks for a new PIN until one has a length the key can take: at least
    /// its minimum in characters (as CTAP counts them), at most 63 bytes.
    /// Checked here so the user hears why at once; the key has the last word.
    fileprivate func askForNewPIN(
        on key: RegisteredKey, reason: EnterPinPrompt.Reason, activity: String, in broker: isolated Broker
    ) async throws(RPCError) -> PIN {
        let minimum = max(PIN.minimumCodePointCount, Int(key.info.minPINLength))
        var reason = reason
        while true {
            let reply = try await prompt(
                .enterPin(EnterPinPrompt(operation: info, authenticator: broker.wire(key), reason: reason, retries: nil, minLength: minimum)),
                in: broker)
            guard let text = reply.pin, !text.isEmpty else { throw RPCError(.cancelled, "\(activity): no new PIN was given") }
            let new = PIN(text)
            if new.codePointCount >= minimum, new.byteCount <= PIN.maximumByteCount { return new }
            reason = .newRejected
        }
    }
}
