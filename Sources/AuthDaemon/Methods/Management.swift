import AuthProtocol
import FIDO2

extension Broker {
    /// The key-management methods need the admin policy, all but the
    /// read-only listing of the key's credentials (`route` checks it
    /// before any of them runs).
    func requireManagementRight(_ session: Session) throws(RPCError) {
        guard session.rights.contains(.manage) else {
            throw RPCError(
                .permissionDenied,
                "uid \(session.peer.uid) may use keys but not manage them (see allow-admins in authkeyd.conf(5))")
        }
    }

    /// Runs a management operation: the key is the one named (checked
    /// before the operation starts), or, for a method that may name none,
    /// one of the keys that meet `requirements`, chosen as for any request
    /// (`Operation.chooseKey`: the only one, or the one the user picks). It is held
    /// for the whole operation (others queue), and its getInfo read again
    /// afterwards so watchers see what changed, and a `.changedKey` result
    /// is the key as it is now.
    func manage(
        _ method: String, key keyID: String?, choosingAmong requirements: KeyRequirements = KeyRequirements(), id: RPCID,
        session: Session, _ body: @escaping (Operation, RegisteredKey) async throws(RPCError) -> ManagementResult
    ) throws(RPCError) -> Handling {
        let named = try keyID.map { (keyID) throws(RPCError) in try requireKey(keyID) }
        if let named, named.info.isU2FOnly { throw U2FOnlyKey.managementRefusal(method) }
        let info = OperationInfo(type: .management, rpId: nil, request: id.json, action: method)
        return try start(method, id: id, session: session) { [self] inFlight throws(RPCError) in
            let operation = Operation(id: id, session: session, request: inFlight, info: info)
            await operation.wakeAgent(in: self)
            let key: RegisteredKey
            if let named { key = named } else { key = try await operation.chooseKey(named: nil, meeting: requirements, in: self) }
            let result = try await operation.withKey(key, in: self) { () async throws(RPCError) -> ManagementResult in
                do throws(RPCError) {
                    let result = try await body(operation, key)
                    await operation.refresh(key, in: self)
                    return result
                } catch {
                    await operation.refresh(key, in: self)
                    throw error
                }
            }
            switch result {
            case .value(let value): return value
            case .changedKey: return encode(AuthenticatorEvent(authenticator: wire(key)))
            }
        }
    }
}

extension Operation {
    /// A management call that needs the PIN when the key has one (a token
    /// with the right permission), and none when it has none.
    func withPINIfSet<T: Sendable>(
        on key: RegisteredKey, activity: String, in broker: isolated Broker,
        _ body: @escaping @Sendable (Device, PIN?) throws(FIDO2Error) -> T
    ) async throws(RPCError) -> T {
        guard key.info.supports.clientPIN.isOn else {
            do {
                return try await perform(key, in: broker) { device throws(FIDO2Error) in try body(device, nil) }
            } catch .device(let error) where error == .pinRequired || error == .pinNotSet {
                throw RPCError(.pinRequired, "\(activity): the key needs a PIN for this; set one first (authenticators.setPin)")
            } catch {
                throw error.rpcError(doing: activity)
            }
        }
        return try await withPIN(on: key, activity: activity, status: nil, in: broker) { device, pin throws(FIDO2Error) in
            try body(device, pin)
        }
    }
}

/// What a management method answers.
enum ManagementResult {
    case value(JSONValue)
    /// The key, with the getInfo read after the change (`{authenticator}`).
    case changedKey
}
