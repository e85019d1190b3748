import AuthProtocol

/// What a `registrations.*` request does to the caller's records.
enum RegistrationAction {
    case list
    case rename
    case delete
}

extension Broker {
    /// `registrations.list`, `.rename`, `.delete`: the caller's own
    /// registrations only; another user's are not even seen. Deleting a
    /// record leaves the credential on the key (credential management
    /// deletes that).
    func registrations(_ action: RegistrationAction, params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        guard let store else {
            throw RPCError(.unsupported, "the registration store is not available (see the daemon's log for the state directory)")
        }
        let uid = session.peer.uid
        do {
            switch action {
            case .list:
                return encode(RegistrationList(registrations: try store.registrations(for: uid)))
            case .rename:
                let rename = try decode(RenameRegistrationParams.self, params)
                let name = rename.friendlyName.trimmingWhitespace()
                guard !name.isEmpty, name.count <= 128 else {
                    throw RPCError(.invalidParams, "invalid params: friendlyName: 1 to 128 characters")
                }
                guard let renamed = try store.rename(id: rename.id, to: name, for: uid) else { throw noSuchRegistration(rename.id) }
                return encode(renamed)
            case .delete:
                let target = try decode(RegistrationIDParams.self, params)
                guard try store.delete(id: target.id, for: uid) else { throw noSuchRegistration(target.id) }
                return ["deleted": true]
            }
        } catch let error as RPCError {
            throw error
        } catch {
            logger.error("registration store: \(error)")
            throw RPCError(.internalError, "the registration store failed: \(error)")
        }
    }

    private func noSuchRegistration(_ id: String) -> RPCError {
        RPCError(.noCredentials, "no registration \(id) for this user (registrations.list shows them)")
    }
}
