import PAMAuthFile
import AuthClient
import Crypto

/// Why an answer from the daemon was refused; for the log.
public struct AssertionRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The module's own check of the daemon's answer, as pam_u2f checks
/// libfido2's (`fido_assert_verify`): the daemon is not trusted to say
/// yes. The signature must verify with the public key in the user's
/// authfile over the authenticator data and the clientDataHash the module
/// made at random for this attempt, so that an answer made up, or one
/// replayed from an earlier attempt, is refused.
public enum AssertionCheck {
    /// What the daemon answered.
    public struct Answer: Sendable {
        public var credentialID: [UInt8]
        public var authenticatorData: [UInt8]
        public var signature: [UInt8]

        public init(credentialID: [UInt8], authenticatorData: [UInt8], signature: [UInt8]) {
            self.credentialID = credentialID
            self.authenticatorData = authenticatorData
            self.signature = signature
        }
    }

    public static func verify(
        _ answer: Answer, against credential: EnrolledCredential, relyingParty: String, clientDataHash: [UInt8],
        requirements: Requirements
    ) throws(AssertionRefusal) {
        if case .id(let id) = credential.keyHandle, !constantTimeEquals(id, answer.credentialID) {
            throw AssertionRefusal("the answer is for another credential than the one asked for")
        }
        guard let data = AuthenticatorData(answer.authenticatorData) else {
            throw AssertionRefusal("the authenticator data is shorter than 37 bytes")
        }
        guard constantTimeEquals(Array(answer.authenticatorData.prefix(32)), SHA256.hash(Array(relyingParty.utf8))) else {
            throw AssertionRefusal("the authenticator data is for another relying party than \(relyingParty)")
        }
        if requirements.presence == .required && !data.userPresent {
            throw AssertionRefusal("the key did not confirm the user's presence (UP flag clear)")
        }
        if requirements.verifiesUser && !data.userVerified {
            throw AssertionRefusal("the key did not verify the user (UV flag clear)")
        }
        guard isValid(answer.signature, over: answer.authenticatorData + clientDataHash, by: credential) else {
            throw AssertionRefusal("the signature does not verify with the enrolled public key")
        }
    }

    private static func isValid(_ signature: [UInt8], over message: [UInt8], by credential: EnrolledCredential) -> Bool {
        let key = credential.publicKey
        switch credential.algorithm {
        case .es256:
            guard key.count == 64, let publicKey = try? P256.PublicKey(x: Array(key[..<32]), y: Array(key[32...])) else { return false }
            return publicKey.isValidSignature(signature, for: message)
        case .eddsa:
            guard let publicKey = try? Ed25519.PublicKey(rawRepresentation: key) else { return false }
            return publicKey.isValidSignature(signature, for: message)
        case .rs256:
            guard key.count == 259, let publicKey = try? RSA.PublicKey(modulus: Array(key[..<256]), exponent: Array(key[256...])) else {
                return false
            }
            return publicKey.isValidSignature(signature, for: message)
        }
    }
}
