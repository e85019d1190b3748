import AuthClient
import AuthProtocol
import CBOR

/// The line formats Debian's fido2-tools verify: what `fido2-cred -M` and
/// `fido2-assert -G` print, and `fido2-cred -V` / `fido2-assert -V` read
/// (fido2-cred(1), fido2-assert(1) INPUT and OUTPUT FORMAT). Binary values
/// are standard base64 with padding, as the tools print them.
enum Fido2ToolsFormat {
    /// The daemon's hash of the client data; one too old to send it gets
    /// a message that says what to do.
    static func clientDataHash(of result: CredentialResult) throws(AuthClientError) -> [UInt8] {
        guard let hash = result.clientDataHash else {
            throw .protocolViolation(
                "the result has no clientDataHash, which --format fido2-tools needs: authkeyd is older than authctl (restart it after an upgrade)")
        }
        return hash.bytes
    }

    /// A registration: client data hash, RP id, format, authenticator data,
    /// credential id, attestation signature, and the certificate if any.
    /// The hash is the daemon's (`clientDataHash` in the result), so that
    /// authctl needs no digest of its own.
    static func credential(_ credential: CredentialJSON, clientDataHash: [UInt8], rpID: String) throws(AuthClientError) -> String {
        let attestation = try credential.attestationObject()
        var lines = [
            Base64.encode(clientDataHash), rpID, attestation.format,
            Base64.encode(wrapped(attestation.authenticatorData)), Base64.encode(credential.rawId.bytes),
            Base64.encode(attestation.signature),
        ]
        if let certificate = attestation.certificate { lines.append(Base64.encode(certificate)) }
        return lines.joined(separator: "\n")
    }

    /// An authentication: client data hash, RP id, authenticator data,
    /// signature, and the user id when the key returned one.
    static func assertion(_ credential: CredentialJSON, clientDataHash: [UInt8], rpID: String) throws(AuthClientError) -> String {
        let assertion = try credential.assertion()
        var lines = [
            Base64.encode(clientDataHash), rpID,
            Base64.encode(wrapped(assertion.authenticatorData)), Base64.encode(assertion.signature),
        ]
        if let user = credential.response.userHandle, !user.bytes.isEmpty { lines.append(Base64.encode(user.bytes)) }
        return lines.joined(separator: "\n")
    }

    /// libfido2 takes authenticator data as CTAP carries it: a CBOR byte
    /// string, not the raw bytes WebAuthn's JSON holds.
    private static func wrapped(_ authenticatorData: [UInt8]) -> [UInt8] {
        CBOR.bytes(authenticatorData).encoded()
    }
}
