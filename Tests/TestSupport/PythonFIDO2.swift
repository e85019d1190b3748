import AuthProtocol

/// python-fido2 (Yubico's CTAP client, pinned in Tests/RelyingParty/
/// requirements.txt) as a second, independent host of a key served on a
/// socket: what authkeyd stored there, read without authkeyd or libfido2.
public enum PythonFIDO2 {
    static let largeBlobReader = "\(RelyingPartyVerifier.repository)/Tests/RelyingParty/largeblob_read.py"

    /// `largeblob_read.py`: the blob stored under the credential's
    /// largeBlobKey (nil when none is) and how many blobs the array holds.
    public static func readLargeBlob(socket: String, rpID: String, credentialID: String) throws -> (blob: [UInt8]?, entries: Int) {
        let result = try run(RelyingPartyVerifier.python, [largeBlobReader, socket, rpID, credentialID])
        guard result.status == 0 else { throw RelyingPartyVerifier.VerificationFailure(reason: result.standardError) }
        let output = try JSONParser().parse(Array(result.standardOutput.utf8.dropLast()))
        return (output["blob"]?.stringValue.flatMap(Base64URL.decode), Int(output["entries"]?.integerValue ?? -1))
    }
}
