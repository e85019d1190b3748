import AuthProtocol
import FIDO2

extension Broker {
    /// `authenticators.credentials.list`: the discoverable credentials on
    /// the key (credential management, read through libfido2), each with
    /// its public key, and the caller's registration records beside them
    /// where the daemon has one. Open to users of keys, not only admins:
    /// it changes nothing, and a key with a PIN asks for it. Naming no key,
    /// it lists one of those that can (`CredentialListing`): the only one
    /// without a touch, else the one the user picks among them.
    func listStoredCredentials(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(ListCredentialsParams.self, params)
        let uid = session.peer.uid
        return try manage(
            ManagementMethod.listCredentials, key: request.authenticator, choosingAmong: KeyRequirements(listsCredentials: true),
            id: id, session: session
        ) { [self] operation, key throws(RPCError) in
            let onKey = try await operation.withPINIfSet(on: key, activity: "listing the key's credentials", in: self) { device, pin throws(FIDO2Error) -> OnKeyCredentials in
                let metadata = try device.credentialMetadata(pin: pin)
                var parties: [StoredRelyingParty]
                do throws(FIDO2Error) {
                    parties = try device.storedRelyingParties(pin: pin)
                } catch where error == .noCredentials { parties = [] }
                if let rpID = request.rpId { parties = parties.filter { $0.id == rpID } }
                let credentials = try parties.map { (party) throws(FIDO2Error) in
                    try device.storedCredentials(relyingPartyID: party.id, pin: pin)
                }
                return OnKeyCredentials(metadata: metadata, parties: parties, credentials: credentials)
            }
            let registrations = (try? await store?.registrations(for: uid)) ?? []
            return .value(encode(onKey.listing(registrations: registrations, on: wire(key))))
        }
    }

    /// `authenticators.credentials.delete`: removes the credential from the
    /// key, and the caller's record of it.
    func deleteStoredCredential(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(CredentialParams.self, params)
        let credentialID = try decodeCredentialID(request.credentialId)
        let uid = session.peer.uid
        return try manage(ManagementMethod.deleteCredential, key: request.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            try await operation.withPINIfSet(on: key, activity: "deleting the credential", in: self) { device, pin throws(FIDO2Error) in
                try device.deleteStoredCredential(id: credentialID, pin: pin)
            }
            do { _ = try await store?.delete(id: request.credentialId, for: uid) } catch {
                logger.error("the credential \(request.credentialId) is gone from the key \(key.id), but not uid \(uid)'s record of it: \(error)")
            }
            return .value(["deleted": true])
        }
    }

    /// `authenticators.credentials.updateUser`: the user's name and display
    /// name on the key; the user id stays.
    func updateStoredCredentialUser(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let request = try decode(UpdateUserParams.self, params)
        let credentialID = try decodeCredentialID(request.credentialId)
        let user = UserEntity(id: request.user.id.bytes, name: request.user.name, displayName: request.user.displayName)
        return try manage(ManagementMethod.updateCredentialUser, key: request.authenticator, id: id, session: session) { [self] operation, key throws(RPCError) in
            let accepted = try await operation.withPINIfSet(on: key, activity: "updating the credential's user", in: self) { device, pin throws(FIDO2Error) in
                do throws(FIDO2Error) {
                    try device.updateStoredCredentialUser(credentialID: credentialID, user: user, pin: pin)
                    return true
                } catch where error == .invalidParameter {
                    // CTAP 2.1 §6.8.6: the one parameter a key checks against
                    // the credential is the user id. The caller's mistake,
                    // not the device's.
                    return false
                }
            }
            guard accepted else {
                throw RPCError(
                    .invalidParams,
                    "invalid params: user.id: it must be the credential's own user id; a key changes only name and displayName")
            }
            return .value(["updated": true])
        }
    }

    func decodeCredentialID(_ text: String) throws(RPCError) -> [UInt8] {
        guard let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw RPCError(.invalidParams, "invalid params: credentialId: expected base64url")
        }
        return bytes
    }
}

/// What credential management read from a key.
struct OnKeyCredentials: Sendable {
    var metadata: CredentialMetadata
    var parties: [StoredRelyingParty]
    var credentials: [[StoredCredential]]
}

extension OnKeyCredentials {
    /// The key's credentials as the protocol lists them, each beside the
    /// caller's registration record where there is one, and the key.
    func listing(registrations: [Registration], on key: Authenticator) -> StoredCredentials {
        StoredCredentials(
            existing: Int(metadata.existing), remaining: Int(metadata.remaining),
            relyingParties: zip(parties, credentials).map { party, credentials in
                .init(id: party.id, name: party.name, credentials: credentials.map { credential in
                    let credentialID = Base64URL.encode(credential.credentialID)
                    return .init(
                        credentialId: credentialID,
                        user: .init(
                            id: Base64URLBytes(credential.user.id), name: credential.user.name,
                            displayName: credential.user.displayName),
                        credProtect: credential.protection.map { Int($0.rawValue) },
                        registration: registrations.first { $0.id == credentialID },
                        publicKey: COSEKey.encoded(credential.publicKey, algorithm: credential.algorithm).map(Base64URLBytes.init),
                        publicKeyAlgorithm: credential.algorithm.map { Int($0.rawValue) })
                })
            },
            authenticator: key)
    }
}
