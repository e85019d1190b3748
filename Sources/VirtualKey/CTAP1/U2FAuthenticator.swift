import Crypto
import SystemKit

/// The layer behind CTAPHID_MSG: CTAP1/U2F request APDUs in, response
/// APDUs (data and status word) out.
protocol MessageCommandProcessor: AnyObject, Sendable {
    /// Runs one request APDU and returns the response APDU. Called on the
    /// key's firmware queue, one request at a time; never blocks.
    func process(message: [UInt8]) -> [UInt8]
}

/// U2F instruction bytes (FIDO U2F Raw Message Formats §4-6).
enum U2FInstruction: UInt8 {
    case register = 0x01
    case authenticate = 0x02
    case version = 0x03
}

/// AUTHENTICATE's control byte (P1).
enum U2FAuthenticateControl: UInt8 {
    /// Only say whether the key handle is this key's: 0x6985 if so, 0x6A80 if not.
    case checkOnly = 0x07
    /// Sign after a touch.
    case enforceUserPresence = 0x03
    /// Sign without waiting for a touch (user-presence byte 0).
    case dontEnforceUserPresence = 0x08
}

/// The key's CTAP1/U2F firmware, for the `u2f` personality: REGISTER,
/// AUTHENTICATE and VERSION (FIDO U2F Raw Message Formats v1.2).
///
/// It shares the CTAP2 authenticator's flash: a key handle is a credential
/// id sealed exactly as makeCredential seals a non-discoverable one (see
/// `SealedCredential`), bound to the application parameter the way CTAP2
/// binds to the rp id hash, so that a CTAP2 host and a U2F host see the
/// same credentials; the counter is the key's signature counter, kept in
/// the state file; the attestation certificate is the key's own.
final class U2FAuthenticator: MessageCommandProcessor, Sendable {
    private let authenticator: Authenticator
    private let presence: U2FPresence
    static let version = Array("U2F_V2".utf8)
    /// REGISTER's reserved first byte of the response.
    static let registerReserved: UInt8 = 0x05

    init(authenticator: Authenticator, user: SimulatedUser) {
        self.authenticator = authenticator
        presence = U2FPresence(user: user)
    }

    func process(message: [UInt8]) -> [UInt8] {
        do throws(StatusWord) {
            let apdu = try CommandAPDU(message)
            guard apdu.cla == 0 else { throw .claNotSupported }
            guard let instruction = U2FInstruction(rawValue: apdu.ins) else { throw .insNotSupported }
            let data: [UInt8]
            switch instruction {
            case .register: data = try register(apdu)
            case .authenticate: data = try authenticate(apdu)
            case .version:
                guard apdu.data.isEmpty else { throw .wrongLength }
                data = Self.version
            }
            return data + StatusWord.noError.bytes
        } catch {
            return error.bytes
        }
    }

    /// REGISTER: `challenge(32) ‖ application(32)` → `0x05 ‖ public key(65)
    /// ‖ key handle length ‖ key handle ‖ attestation certificate ‖
    /// signature over 0x00 ‖ application ‖ challenge ‖ key handle ‖ public key`.
    private func register(_ apdu: CommandAPDU) throws(StatusWord) -> [UInt8] {
        guard apdu.data.count == 64 else { throw .wrongLength }
        let challenge = Array(apdu.data[0..<32])
        let application = Array(apdu.data[32..<64])
        guard presence.consumeTouch() else { throw .conditionsNotSatisfied }
        return try authenticator.lock.withLock { () throws(StatusWord) -> [UInt8] in
            let state = authenticator.state
            do {
                let key = try P256.PrivateKey()
                var scalar = key.rawRepresentation
                defer { zeroSecret(&scalar) }
                let keyHandle = try SealedCredential(
                    privateKey: scalar, algorithm: .es256, protection: 1, isDiscoverable: false, hasHMACSecret: false,
                    credentialBlob: []
                ).seal(masterKey: state.masterKey, rpIDHash: application)
                let publicKey = key.publicKey.x962Representation
                let attestationKey = try P256.PrivateKey(rawRepresentation: state.attestation.privateKey)
                let signature = try attestationKey.signature(
                    for: [0x00] + application + challenge + keyHandle + publicKey)
                return [Self.registerReserved] + publicKey + [UInt8(keyHandle.count)] + keyHandle
                    + state.attestation.certificate + signature
            } catch {
                throw .noPreciseDiagnosis
            }
        }
    }

    /// AUTHENTICATE: `challenge(32) ‖ application(32) ‖ key handle length ‖
    /// key handle` → `user presence ‖ counter(4) ‖ signature over
    /// application ‖ user presence ‖ counter ‖ challenge`.
    private func authenticate(_ apdu: CommandAPDU) throws(StatusWord) -> [UInt8] {
        let data = apdu.data
        guard data.count >= 65, data.count == 65 + Int(data[64]) else { throw .wrongLength }
        let challenge = Array(data[0..<32])
        let application = Array(data[32..<64])
        let keyHandle = Array(data[65...])
        guard let control = U2FAuthenticateControl(rawValue: apdu.p1) else { throw .wrongData }
        let credential = authenticator.lock.withLock { authenticator.openCredential(keyHandle, rpIDHash: application) }
        // A credential that needs user verification (credProtect level 3)
        // cannot be used where there is none; U2F signs with ES256 only,
        // so an Ed25519 credential of the CTAP2 side is not this key's here.
        guard let credential, credential.sealed.protection != 3, credential.sealed.algorithm == .es256 else {
            throw .wrongData
        }
        let userPresent: Bool
        switch control {
        case .checkOnly: throw .conditionsNotSatisfied
        case .enforceUserPresence:
            guard presence.consumeTouch() else { throw .conditionsNotSatisfied }
            userPresent = true
        case .dontEnforceUserPresence:
            userPresent = false
        }
        return try authenticator.lock.withLock { () throws(StatusWord) -> [UInt8] in
            authenticator.state.signCount &+= 1
            do { try authenticator.persist() } catch { throw .noPreciseDiagnosis }
            let prefix = [userPresent ? 0x01 : 0x00] + bigEndian(authenticator.state.signCount)
            guard let signature = try? P256.PrivateKey.signature(
                for: application + prefix + challenge, scalar: credential.sealed.privateKey)
            else { throw .noPreciseDiagnosis }
            return prefix + signature
        }
    }
}
