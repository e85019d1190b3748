import AuthProtocol
import Foundation

/// An independent WebAuthn client: python-fido2 in the virtual environment
/// `scripts/rp-venv` makes, asking a socket key for hmac-secret outputs
/// itself (`Tests/RelyingParty/prf_client.py`).
public enum PythonFIDO2Client {
    static let script = "\(RelyingPartyVerifier.repository)/Tests/RelyingParty/prf_client.py"

    public static var isAvailable: Bool {
        RelyingPartyVerifier.isAvailable
            && ((try? run(RelyingPartyVerifier.python, ["-c", "import fido2.client"]).status) == 0)
    }

    /// What python-fido2 got (`clientExtensionResults`, `credentialId`,
    /// `userVerified`) authenticating, or registering with `mode: register`.
    public static func ask(_ request: JSONValue) throws -> Result<JSONValue, RelyingPartyVerifier.VerificationFailure> {
        let result = try run(RelyingPartyVerifier.python, [script], input: request.jsonText)
        guard result.status == 0 else { return .failure(.init(reason: result.standardError)) }
        return .success(try JSONParser().parse(Array(result.standardOutput.utf8.dropLast())))
    }
}
