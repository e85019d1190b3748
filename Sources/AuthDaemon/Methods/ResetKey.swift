import AuthProtocol
import FIDO2

extension Broker {
    /// `authenticators.reset`: erases every credential and the PIN. The
    /// caller confirms by naming the key's product (a client asks the user
    /// to type it); the key then wants a touch, and refuses altogether
    /// unless it was plugged in moments ago (CTAP 2.1 §6.6: 10 seconds).
    func resetKey(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let reset = try decode(ResetParams.self, params)
        let product = try requireKey(reset.authenticator).product
        guard reset.confirm == product else {
            throw RPCError(.invalidParams, "invalid params: confirm: type the key's product name, \"\(product)\", to reset it")
        }
        return try manage(ManagementMethod.reset, key: reset.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            operation.sendStatus(.waitingForTouch, key: key, in: self)
            do throws(FIDOFailure) {
                try await operation.perform(key, in: self) { device throws(FIDO2Error) in try device.reset() }
            } catch .device(let error) where error == .notAllowed {
                throw RPCError(
                    .notAllowed,
                    "the key accepts a reset only within seconds of being plugged in: unplug it, plug it back in, and reset it at once",
                    details: ["fido": .string(error.name)])
            } catch {
                throw error.rpcError(doing: "resetting the key")
            }
            _ = keys.setName(nil, of: key)
            return .changedKey
        }
    }
}
