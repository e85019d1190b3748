import AuthProtocol

/// python-fido2 (Yubico's CTAP client, pinned in Tests/RelyingParty/
/// requirements.txt) as a second, independent host of a key served on a
/// socket: what authkeyd stored there, read without authkeyd or libfido2.
public enum PythonFIDO2 {
    static let largeBlobReader = "\(RelyingPartyVerifier.repository)/Tests/RelyingParty/largeblob_read.py"
    static let busyKeyProbe = "\(RelyingPartyVerifier.repository)/Tests/RelyingParty/busy_key.py"

    /// `busy_key.py`: getInfo `count` times; each call's outcome, "ok" or
    /// the CTAP error python-fido2 raised, and the ERR_CHANNEL_BUSY answers
    /// it waited out on the way.
    public static func getInfoOutcomes(socket: String, count: Int) throws -> (outcomes: [String], busyAnswers: Int) {
        let result = try run(RelyingPartyVerifier.python, [busyKeyProbe, socket, String(count)])
        guard result.status == 0 else { throw RelyingPartyVerifier.VerificationFailure(reason: result.standardError) }
        let output = try JSONParser().parse(Array(result.standardOutput.utf8.dropLast()))
        return (output["outcomes"]?.arrayValue?.compactMap(\.stringValue) ?? [], Int(output["busyAnswers"]?.integerValue ?? -1))
    }

    /// `largeblob_read.py`: the blob stored under the credential's
    /// largeBlobKey (nil when none is) and how many blobs the array holds.
    public static func readLargeBlob(socket: String, rpID: String, credentialID: String) throws -> (blob: [UInt8]?, entries: Int) {
        let result = try run(RelyingPartyVerifier.python, [largeBlobReader, socket, rpID, credentialID])
        guard result.status == 0 else { throw RelyingPartyVerifier.VerificationFailure(reason: result.standardError) }
        let output = try JSONParser().parse(Array(result.standardOutput.utf8.dropLast()))
        return (output["blob"]?.stringValue.flatMap(Base64URL.decode), Int(output["entries"]?.integerValue ?? -1))
    }
}
