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
    /// deletes that). The file is read, the first time, and written off the
    /// broker's queue (`RegistrationStore`): a rename or deletion is
    /// answered once it is on disk.
    func registrations(_ action: RegistrationAction, params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        guard let store else {
            throw RPCError(.unsupported, "the registration store is not available (see the daemon's log for the state directory)")
        }
        let uid = session.peer.uid
        switch action {
        case .list:
            return try start(Method.listRegistrations, id: id, session: session) { [self] _ throws(RPCError) in
                do throws(RegistrationStoreError) {
                    return encode(RegistrationList(registrations: try await store.registrations(for: uid)))
                } catch { throw storeFailed(error) }
            }
        case .rename:
            let rename = try decode(RenameRegistrationParams.self, params)
            let name = rename.friendlyName.trimmingWhitespace()
            guard !name.isEmpty, name.count <= 128 else {
                throw RPCError(.invalidParams, "invalid params: friendlyName: 1 to 128 characters")
            }
            return try start(Method.renameRegistration, id: id, session: session) { [self] _ throws(RPCError) in
                let renamed: Registration?
                do throws(RegistrationStoreError) { renamed = try await store.rename(id: rename.id, to: name, for: uid) } catch { throw storeFailed(error) }
                guard let renamed else { throw noSuchRegistration(rename.id) }
                return encode(renamed)
            }
        case .delete:
            let target = try decode(RegistrationIDParams.self, params)
            return try start(Method.deleteRegistration, id: id, session: session) { [self] _ throws(RPCError) in
                let deleted: Bool
                do throws(RegistrationStoreError) { deleted = try await store.delete(id: target.id, for: uid) } catch { throw storeFailed(error) }
                guard deleted else { throw noSuchRegistration(target.id) }
                return ["deleted": true]
            }
        }
    }

    private func storeFailed(_ error: RegistrationStoreError) -> RPCError {
        logger.error("registration store: \(error)")
        return RPCError(.internalError, "the registration store failed: \(error)")
    }

    private func noSuchRegistration(_ id: String) -> RPCError {
        RPCError(.noCredentials, "no registration \(id) for this user (registrations.list shows them)")
    }
}
