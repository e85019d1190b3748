import CBOR
import Crypto

/// authenticatorCredentialManagement (CTAP 2.1 §6.8), also reached as the
/// FIDO_2_1_PRE command 0x41 that libfido2 sends.
extension Authenticator {
    private enum Subcommand: UInt64 {
        case getMetadata = 0x01
        case enumerateRPsBegin = 0x02
        case enumerateRPsNext = 0x03
        case enumerateCredentialsBegin = 0x04
        case enumerateCredentialsNext = 0x05
        case deleteCredential = 0x06
        case updateUserInformation = 0x07
    }

    func credentialManagement(_ parameters: Parameters) throws(CTAP2Status) -> CBORMap? {
        let subcommandValue = try parameters.required(try parameters.unsigned(0x01))
        guard let subcommand = Subcommand(rawValue: subcommandValue) else { throw .invalidSubcommand }
        let subParameters = try parameters.nestedMap(0x02)

        // The "next" steps ride on the authorisation of their "begin".
        if subcommand != .enumerateRPsNext && subcommand != .enumerateCredentialsNext {
            var message: [UInt8] = [UInt8(subcommandValue)]
            if let subParameters { message += CBOR.map(subParameters).encoded() }
            try verifyToken(
                parameter: try parameters.bytes(0x04), protocolValue: try parameters.unsigned(0x03), message: message,
                permission: .credentialManagement)
        }
        let sub = Parameters(subParameters ?? [:])
        switch subcommand {
        case .getMetadata:
            try requireUnboundToken()
            return [
                0x01: .int(state.residentCredentials.count),
                0x02: .int(max(0, configuration.residentCredentialCapacity - state.residentCredentials.count)),
            ]
        case .enumerateRPsBegin:
            try requireUnboundToken()
            let rpIDs = Array(Set(state.residentCredentials.map(\.rpID))).sorted()
            guard let first = rpIDs.first else { throw .noCredentials }
            volatile.relyingPartyEnumeration = rpIDs.count > 1 ? Enumeration(items: rpIDs) : nil
            var response = relyingPartyEntry(first)
            response[0x05] = .int(rpIDs.count)
            return response
        case .enumerateRPsNext:
            guard let next = volatile.relyingPartyEnumeration?.advance() else { throw .notAllowed }
            return relyingPartyEntry(next)
        case .enumerateCredentialsBegin:
            let rpIDHash = try sub.required(try sub.bytes(0x01))
            if let bound = volatile.token.permissionsRPID, SHA256.hash(Array(bound.utf8)) != rpIDHash {
                throw .pinAuthInvalid
            }
            let credentials = state.residentCredentials
                .filter { SHA256.hash(Array($0.rpID.utf8)) == rpIDHash }
                .sorted { $0.serial > $1.serial }
            guard let first = credentials.first else { throw .noCredentials }
            volatile.credentialEnumeration = credentials.count > 1 ? Enumeration(items: credentials.map(\.id)) : nil
            var response = try credentialEntry(first)
            response[0x09] = .int(credentials.count)
            return response
        case .enumerateCredentialsNext:
            guard let id = volatile.credentialEnumeration?.advance(),
                let credential = state.residentCredentials.first(where: { $0.id == id })
            else { throw .notAllowed }
            return try credentialEntry(credential)
        case .deleteCredential:
            let index = try storedCredentialIndex(sub)
            state.residentCredentials.remove(at: index)
            try persist()
            return nil
        case .updateUserInformation:
            let index = try storedCredentialIndex(sub)
            let user = try UserInfo(try sub.required(sub.item(0x03)))
            guard user.id == state.residentCredentials[index].userID else { throw .invalidParameter }
            state.residentCredentials[index].userName = user.name
            state.residentCredentials[index].userDisplayName = user.displayName
            try persist()
            return nil
        }
    }

    /// Listing every relying party, or the counts, needs a token not bound
    /// to one relying party.
    private func requireUnboundToken() throws(CTAP2Status) {
        guard volatile.token.permissionsRPID == nil else { throw .pinAuthInvalid }
    }

    private func relyingPartyEntry(_ rpID: String) -> CBORMap {
        var rp: CBORMap = ["id": .text(rpID)]
        if let name = state.residentCredentials.first(where: { $0.rpID == rpID && $0.rpName != nil })?.rpName {
            rp["name"] = .text(name)
        }
        return [0x03: .map(rp), 0x04: .bytes(SHA256.hash(Array(rpID.utf8)))]
    }

    private func credentialEntry(_ credential: ResidentCredential) throws(CTAP2Status) -> CBORMap {
        let rpIDHash = SHA256.hash(Array(credential.rpID.utf8))
        guard let sealed = SealedCredential.open(credential.id, masterKey: state.masterKey, rpIDHash: rpIDHash),
            let key = try? CredentialKey.restore(sealed.algorithm, privateKey: sealed.privateKey)
        else { throw .other }
        let user = UserInfo(id: credential.userID, name: credential.userName, displayName: credential.userDisplayName)
        var entry: CBORMap = [
            0x06: user.cbor(includingNames: true),
            0x07: .map(["id": .bytes(credential.id), "type": "public-key"]),
            0x08: key.cosePublicKey,
            0x0A: .int(Int(credential.protection)),
        ]
        if credential.hasLargeBlobKey { entry[0x0B] = .bytes(state.largeBlobKey(credentialID: credential.id)) }
        return entry
    }

    /// The stored credential a deleteCredential or updateUserInformation
    /// names, if the token may touch its relying party.
    private func storedCredentialIndex(_ sub: Parameters) throws(CTAP2Status) -> Int {
        let descriptor = try sub.required(sub.item(0x02))
        guard let id = try credentialIDs(in: [descriptor]).first else { throw .invalidParameter }
        guard let index = state.residentCredentials.firstIndex(where: { $0.id == id }) else { throw .noCredentials }
        if let bound = volatile.token.permissionsRPID, bound != state.residentCredentials[index].rpID {
            throw .pinAuthInvalid
        }
        return index
    }
}
