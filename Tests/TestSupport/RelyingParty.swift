import AuthProtocol
import Foundation

/// An independent WebAuthn relying party: py_webauthn in the virtual
/// environment `scripts/rp-venv` makes (`make test` makes it).
public enum RelyingPartyVerifier {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let python = "\(repository)/.build/rp-venv/bin/python"
    static let script = "\(repository)/Tests/RelyingParty/verify.py"

    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: python) }

    /// Runs `verify.py register|authenticate` with the request; the parsed
    /// result on success, the verifier's reason on failure.
    public static func verify(_ mode: String, _ request: JSONValue) throws -> Result<JSONValue, VerificationFailure> {
        let result = try run(python, [script, mode], input: request.jsonText)
        guard result.status == 0 else { return .failure(VerificationFailure(reason: result.standardError)) }
        return .success(try JSONParser().parse(Array(result.standardOutput.utf8.dropLast())))
    }

    public struct VerificationFailure: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }
}
