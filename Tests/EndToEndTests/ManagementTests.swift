import AuthClient
import AuthProtocol
import FIDO2
import Foundation
import TestSupport
import Testing
import VirtualKey
import SystemKit
import VirtualKeyDevice

/// Key management through the real daemon: a PIN set and changed, kept out
/// of authkeyd's log, and management refused to another uid but for the
/// listing of a key's credentials, which any user may read. (Reset, the
/// credentials on a key, fingerprints and config are tested against the
/// broker in process: AuthDaemonTests.ManagementTests.) What a call
/// changed on a key is checked on the key itself, through libfido2 on its
/// state file once the daemon has stopped, not through the daemon's word.
@Suite(.timeLimit(.minutes(3))) struct ManagementTests {
    /// Opens a virtual key's state file in this process, through libfido2.
    func openKey(state path: String) throws -> Device {
        try VirtualKey(configuration: try VirtualKeyConfiguration(spec: "state=\(path)")).openDevice()
    }

    /// A daemon serving one virtual key `K1` (`spec` adds settings) kept in a state file.
    func daemon(_ spec: String = "", arguments: [String] = []) async throws -> (DaemonProcess, state: String) {
        let directory = TemporaryDirectory(prefix: "authkeyd")
        let state = directory.file("key.state")
        let daemon = try DaemonProcess(["--virtual-key", "name=K1,state=\(state)\(spec.isEmpty ? "" : ",")\(spec)"] + arguments, directory: directory)
        _ = try await daemon.waitForKeys(1)
        return (daemon, state)
    }

    @Test func setThenChangeThePIN() async throws {
        let (daemon, state) = try await daemon()
        let client = try daemon.client()
        // No PIN, no attempts to count (the key answers PIN_NOT_SET, as YubiKeys do).
        #expect(try await client.retries(on: "v1").pinRetries == nil)

        // Too short for the key's minimum (4): asked again, with the reason.
        let setting = ScriptedUI(pins: ["12", "123456"])
        client.setUI(setting)
        let key = try await client.setPIN(on: "v1")
        #expect(key.pinSet)
        #expect(setting.pinRequests.map(\.reason) == [.new, .newRejected])
        #expect(try await client.retries(on: "v1").pinRetries == 8)
        client.setUI(ScriptedUI(pins: ["999999"]))
        await expectReason(.notAllowed) { try await client.setPIN(on: "v1") }

        // A wrong current PIN costs an attempt; the user gives up.
        client.setUI(ScriptedUI(pins: ["000000", "654321", nil]))
        await expectReason(.cancelled) { try await client.changePIN(on: "v1") }
        #expect(try await client.retries(on: "v1").pinRetries == 7)

        // Wrong, then right: the new PIN is asked once and kept.
        let changing = ScriptedUI(pins: ["000000", "654321", "123456"])
        client.setUI(changing)
        _ = try await client.changePIN(on: "v1")
        #expect(changing.pinRequests.map(\.reason) == [.current, .new, .invalid])
        #expect(changing.pinRequests.last?.retries == 6, "asked again after the second wrong PIN: 6 attempts left")
        #expect(try await client.retries(on: "v1").pinRetries == 8, "a right PIN restores the attempts")
        daemon.stop()
        for pin in ["123456", "654321", "000000", "999999"] { #expect(!daemon.log.contains(pin), "a PIN in the log") }

        let device = try openKey(state: state)
        #expect(throws: FIDO2Error.pinInvalid) { try device.credentialMetadata(pin: "123456") }
        #expect(throws: Never.self) { try device.credentialMetadata(pin: "654321") }
    }

    /// Every management call but the listing of the key's credentials
    /// (read-only, the key asks for its PIN: `ssh-keygen -K` for an
    /// ordinary user) is refused to a user who is not an admin.
    @Test func aUserWhoIsNotAnAdminIsRefusedEveryManagementCallButTheCredentialListing() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv to act as another uid")
        let daemon = try DaemonProcess.openToEveryone(["--virtual-key", "name=Shared"])
        _ = try await daemon.waitForKeys(1)
        let requests = ManagementMethod.all.enumerated().map { index, method in
            #"{"jsonrpc":"2.0","id":\#(index + 1),"method":"\#(method)","params":{"authenticator":"v1"}}"#
        } + [#"{"jsonrpc":"2.0","id":0,"method":"authenticators.list"}"#]
        let (replies, errors) = try OtherUser.exchange(requests, socketPath: daemon.socketPath)
        try #require(replies.count == requests.count, "stderr: \(errors)\n\(daemon.log)")
        let refused = replies.filter { $0["error"]?["data"]?["reason"] == "permissionDenied" }.compactMap { $0["id"]?.integerValue }
        // The daemon's policy (its `needsAdminRight`): all but the listing.
        let adminOnly = ManagementMethod.all.enumerated().filter { $0.element != ManagementMethod.listCredentials }
        #expect(refused.sorted() == adminOnly.map { Int64($0.offset + 1) })
        let listing = try #require(ManagementMethod.all.firstIndex(of: ManagementMethod.listCredentials)).advanced(by: 1)
        let listed = try #require(replies.first { $0["id"]?.integerValue == Int64(listing) })
        // The key has no PIN, which credential management needs: refused
        // by the key's rule, not the admin rule.
        #expect(listed["error"]?["data"]?["reason"] == "pinRequired", "\(listed)")
        #expect(replies.first { $0["id"] == 0 }?["result"]?["authenticators"]?.arrayValue?.count == 1, "using keys is allowed")
    }

    /// authctl run by nobody, as a script runs it (no terminal, the PINs
    /// on `--pin-fd 3`).
    func authctlAsNobody(_ daemon: DaemonProcess, _ arguments: [String], pins: String) throws -> CommandResult {
        let command = [builtProduct("authctl"), "--socket", daemon.socketPath] + arguments + ["--pin-fd", "3"]
        return try OtherUser.run("/bin/sh", ["-c", "exec /usr/bin/setsid -w \"$@\" 3<&0 </dev/null", "sh"] + command, input: pins)
    }

    /// What `ssh-keygen -K` needs of an ordinary user: the key's
    /// credentials, listed with the key's PIN, with their public keys; root's
    /// record of the credential stays root's, and deleting it stays the
    /// admins' (authctl's exit status 77).
    @Test func anotherUserListsTheKeysCredentialsButNotTheOwnersRecordAndDeletesNone() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv to act as another uid")
        let daemon = try DaemonProcess.openToEveryone(["--virtual-key", "name=Shared,pin=1234"])
        _ = try await daemon.waitForKeys(1)
        let register = ["register", "--rp", "example.org", "--user", "alice", "--resident", "--authenticator", "v1", "--name", "Root's", "--json"]
        let registered = try authctl(daemon, register, pinFD: "1234\n")
        try #require(registered.status == 0, "register: \(registered.standardError)\n\(daemon.log)")
        let id = try #require(try registered.json()["credential"]?["id"]?.stringValue)

        let theirs = try authctlAsNobody(daemon, ["credentials", "list", "v1", "--json"], pins: "1234\n")
        try #require(theirs.status == 0, "nobody's list: \(theirs.standardError)\n\(daemon.log)")
        let listed = try #require(try theirs.json()["relyingParties"]?.arrayValue?.first?["credentials"]?.arrayValue?.first)
        #expect(listed["credentialId"]?.stringValue == id)
        #expect(listed["publicKeyAlgorithm"] == -7 && listed["publicKey"]?.stringValue != nil, "\(listed)")
        #expect(listed["registration"] == nil, "root's record is root's: \(listed)")

        let deleted = try authctlAsNobody(daemon, ["credentials", "delete", "v1", String(id.prefix(10))], pins: "1234\n1234\n")
        #expect(deleted.status == 77, "nobody's delete: \(deleted.standardError)")
        let ours = try authctl(daemon, ["credentials", "list", "v1", "--json"], pinFD: "1234\n")
        let kept = try #require(try ours.json()["relyingParties"]?.arrayValue?.first?["credentials"]?.arrayValue?.first)
        #expect(kept["credentialId"]?.stringValue == id, "still on the key")
        #expect(kept["registration"]?["friendlyName"] == "Root's", "root sees its own record: \(kept)")
    }

    /// Another user cannot burn the key's PIN: with 3 or fewer attempts
    /// left, nobody's PIN is refused before the key sees it
    /// (`pinAttemptsLow`), each wrong attempt is logged with who made it,
    /// and root (an admin) still enters the PIN, which restores the count.
    @Test func anotherUserCannotSpendTheLastPINAttempts() async throws {
        try #require(OtherUser.isAvailable, "needs root and setpriv to act as another uid")
        let daemon = try DaemonProcess.openToEveryone(["--virtual-key", "name=Guarded,pin=1234,pin-retries=5"])
        _ = try await daemon.waitForKeys(1)
        // Two wrong PINs from nobody, with the attempts above the reserve:
        // the key spends them (5, then 4 left); the third would leave 3.
        let wrong = try authctlAsNobody(daemon, ["credentials", "list", "v1"], pins: "0000\n0000\n")
        #expect(wrong.status != 0, "\(wrong.standardOutput)")
        #expect(daemon.log.contains("a wrong PIN from uid \(OtherUser.nobodyUID)"), "\(daemon.log)")
        // Now 3 are left: refused before any PIN is asked of the key.
        let refused = try authctlAsNobody(daemon, ["credentials", "list", "v1"], pins: "1234\n")
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("only 3 PIN attempts left"), "\(refused.standardError)")
        #expect(daemon.log.contains("3 PIN attempts left; refused uid \(OtherUser.nobodyUID)"), "\(daemon.log)")
        let info = try authctl(daemon, ["info", "v1", "--json"])
        #expect(try info.json()["info"]?["pinRetries"] == 3, "nobody's refused attempt cost nothing: \(info.standardOutput)")
        // Root may: the right PIN restores the attempts.
        let ours = try authctl(daemon, ["credentials", "list", "v1"], pinFD: "1234\n")
        #expect(ours.status == 0, "\(ours.standardError)\n\(daemon.log)")
        let after = try authctl(daemon, ["info", "v1", "--json"])
        #expect(try after.json()["info"]?["pinRetries"] == 8, "\(after.standardOutput)")
    }
}
