import CBOR

extension Authenticator {
    /// authenticatorReset (CTAP 2.1 §6.6): only shortly after power-up, and
    /// only with a touch. Everything the key holds is erased, but its
    /// attestation identity; old credential ids stop opening because the
    /// master key is new.
    func reset(context: CommandContext) throws(CTAP2Status) -> CBORMap? {
        guard ContinuousClock.now - volatile.poweredUpAt <= configuration.resetWindow else { throw .notAllowed }
        try requireUserPresence(context)
        state.reset()
        try persist()
        let poweredUpAt = volatile.poweredUpAt
        volatile = VolatileState(poweredUpAt: poweredUpAt)
        return nil
    }

    /// authenticatorSelection (CTAP 2.1 §6.9): "is this the key you mean?" —
    /// answered by a touch.
    func selection(context: CommandContext) throws(CTAP2Status) -> CBORMap? {
        try requireUserPresence(context)
        return nil
    }
}
