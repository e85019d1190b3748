import CBOR

/// authenticatorConfig (CTAP 2.1 §6.11): always-UV and the minimum PIN length.
extension Authenticator {
    private enum Subcommand: UInt64 {
        case enableEnterpriseAttestation = 0x01
        case toggleAlwaysUV = 0x02
        case setMinPINLength = 0x03
    }

    func config(_ parameters: Parameters) throws(CTAP2Status) -> CBORMap? {
        let subcommandValue = try parameters.required(try parameters.unsigned(0x01))
        guard let subcommand = Subcommand(rawValue: subcommandValue) else { throw .invalidSubcommand }
        let subParameters = try parameters.nestedMap(0x02)
        // A key nobody has protected yet may be configured freely.
        if isProtectedByUV || state.alwaysUV {
            var message = [UInt8](repeating: 0xFF, count: 32) + [CTAP2Command.config.rawValue, UInt8(subcommandValue)]
            if let subParameters { message += CBOR.map(subParameters).encoded() }
            try verifyToken(
                parameter: try parameters.bytes(0x04), protocolValue: try parameters.unsigned(0x03), message: message,
                permission: .authenticatorConfig)
        }
        switch subcommand {
        case .enableEnterpriseAttestation:
            throw .invalidParameter
        case .toggleAlwaysUV:
            state.alwaysUV.toggle()
            try persist()
            return nil
        case .setMinPINLength:
            try setMinPINLength(Parameters(subParameters ?? [:]))
            return nil
        }
    }

    /// The minimum can only grow (a reset lowers it); a PIN shorter than the
    /// new minimum must be changed before the key is used again.
    private func setMinPINLength(_ parameters: Parameters) throws(CTAP2Status) {
        let newMinimum = try parameters.unsigned(0x01).map(Int.init) ?? state.minPINLength
        let relyingParties = try parameters.array(0x02)
        let forceChange = try parameters.bool(0x03) ?? false
        guard newMinimum >= state.minPINLength, newMinimum <= 63 else { throw .pinPolicyViolation }
        if forceChange && !state.isPINSet { throw .pinNotSet }
        if let relyingParties, relyingParties.count > Self.maxRPIDsForSetMinPINLength { throw .keyStoreFull }
        state.minPINLength = newMinimum
        if let relyingParties {
            state.minPINLengthRPIDs = try relyingParties.map { (item) throws(CTAP2Status) -> String in
                guard let id = item.textValue else { throw .cborUnexpectedType }
                return id
            }
        }
        if forceChange || (state.isPINSet && state.pinLength < newMinimum) {
            state.forcePINChange = true
            volatile.token.reset()
        }
        try persist()
    }
}
