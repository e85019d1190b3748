import AuthProtocol
import FIDO2

extension Broker {
    /// `authenticators.config.setAlwaysUv`: CTAP only toggles, so the
    /// daemon toggles when the key is not already as asked.
    func setAlwaysUV(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(AlwaysUvParams.self, params)
        return try manage(ManagementMethod.setAlwaysUv, key: request.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            guard key.info.supports.authenticatorConfig, key.info.supports.alwaysUV.isSupported else {
                throw RPCError(.unsupported, "the key does not support always-UV")
            }
            if key.info.supports.alwaysUV.isOn != request.enabled {
                try await operation.withPINIfSet(on: key, activity: "changing always-UV", in: self) { device, pin throws(FIDO2Error) in
                    try device.toggleAlwaysUV(pin: pin)
                }
            }
            return .changedKey
        }
    }

    /// `authenticators.config.setMinPinLength`: a longer minimum, the relying
    /// parties that may read it, and whether the PIN must change now.
    func setMinimumPINLength(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(MinPinLengthParams.self, params)
        let lengths = PIN.minimumCodePointCount...PIN.maximumByteCount
        if let length = request.length, !lengths.contains(length) {
            throw RPCError(.invalidParams, "invalid params: length: \(lengths.lowerBound) to \(lengths.upperBound)")
        }
        return try manage(ManagementMethod.setMinPinLength, key: request.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            guard key.info.supports.setMinPINLength else {
                throw RPCError(.unsupported, "the key cannot change its minimum PIN length")
            }
            if let length = request.length, length < Int(key.info.minPINLength) {
                throw RPCError(.notAllowed, "the minimum PIN length can only grow (it is \(key.info.minPINLength)); a reset lowers it")
            }
            try await operation.withPINIfSet(on: key, activity: "changing the minimum PIN length", in: self) { device, pin throws(FIDO2Error) in
                // libfido2 sends each part as a command of its own, each with
                // a token; a minimum longer than the PIN forces a change at
                // once (CTAP 2.1 §6.11.4), and a key forcing a change grants
                // no more tokens: so the relying parties first, the
                // length next, and the forced change only if still needed.
                if let relyingParties = request.rpIds { try device.setMinimumPINLengthRelyingParties(relyingParties, pin: pin) }
                if let length = request.length { try device.setMinimumPINLength(length, pin: pin) }
                if request.forceChange == true, try !device.info().forcePINChange { try device.forcePINChange(pin: pin) }
            }
            return .changedKey
        }
    }
}
