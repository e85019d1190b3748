import Foundation
import Glibc
import TestSupport
import Testing

/// Debian's ssh-keygen making and using security keys through the
/// provider (libauthkeyd-sk.so) and the real daemon with a virtual key:
/// `-t ecdsa-sk|ed25519-sk -w`, `-Y sign`, `-O resident` with `-K`, and
/// `-O verify-required` with a PIN. OpenSSH is the judge of every
/// signature (`ssh-keygen -Y verify`, which needs no key); no test knows
/// what a signature should be.
@Suite(.serialized, .timeLimit(.minutes(2))) struct OpenSSHKeyTests {
    /// The daemon with one virtual key made from `spec`, and a user of it.
    func started(_ spec: String = "name=K1") async throws -> (DaemonProcess, OpenSSHUser) {
        let daemon = try DaemonProcess(["--virtual-key", spec])
        _ = try await daemon.waitForKeys(1)
        return (daemon, try OpenSSHUser(socketPath: daemon.socketPath))
    }

    /// Signs `message` with the key in `key` and has OpenSSH verify it
    /// against `publicKey`: the flags of the verified signature.
    func signAndVerify(_ user: OpenSSHUser, _ message: String, key: String = "id", publicKey: String,
                       daemon: DaemonProcess) throws -> UInt8? {
        let (signing, signature) = try user.sign(message, key: key)
        guard let signature else {
            Issue.record("ssh-keygen -Y sign failed: \(signing)\nauthkeyd's log:\n\(daemon.log)")
            return nil
        }
        let verified = try user.verify(message, signature: signature, publicKey: publicKey)
        #expect(verified.succeeded, "ssh-keygen -Y verify: \(verified)")
        #expect(verified.standardOutput.contains("Good \"file\" signature for signer@authkeyd"), "\(verified)")
        return signatureFlags(verified)
    }

    @Test(arguments: [("ecdsa-sk", "sk-ecdsa-sha2-nistp256@openssh.com"), ("ed25519-sk", "sk-ssh-ed25519@openssh.com")])
    func enrolledKeySignsAndOpenSSHVerifiesIt(type: String, keyType: String) async throws {
        let (daemon, user) = try await started()
        let publicKey = try user.enroll(type)
        #expect(publicKey.hasPrefix("\(keyType) "), "\(publicKey)")

        let message = "signed through authkeyd with \(type), \(UInt64.random(in: 0...UInt64.max))\n"
        let flags = try signAndVerify(user, message, publicKey: publicKey, daemon: daemon)
        // User presence: the key was touched, as OpenSSH asks by default.
        #expect(flags.map { $0 & 0x01 } == 0x01, "flags \(String(describing: flags))")

        // The same signature over another message is refused.
        let signature = try #require(user.signature())
        let tampered = try user.verify(message + "tampered", signature: signature, publicKey: publicKey)
        #expect(tampered.status == 255, "\(tampered)")
        #expect(!tampered.standardOutput.contains("Good \"file\" signature"), "\(tampered)")
        // ... and so is it under another key.
        let other = try user.enroll(type, file: "other")
        let wrongKey = try user.verify(message, signature: signature, publicKey: other)
        #expect(wrongKey.status == 255, "\(wrongKey)")
    }

    /// A daemon stopped by SIGSTOP (or deadlocked) takes the connection
    /// but never answers: the provider gives up within seconds with
    /// SSH_SK_ERR_DEVICE_NOT_FOUND, and ssh-keygen fails (ssh would try its
    /// next key) instead of hanging.
    @Test func aFrozenDaemonIsNoKeyWithinSecondsNotAHang() async throws {
        let (daemon, user) = try await started()
        _ = try user.enroll("ecdsa-sk")
        daemon.signal(SIGSTOP)
        defer {
            daemon.signal(SIGCONT)
            _ = daemon.stop()
        }
        let started = ContinuousClock.now
        let (signing, signature) = try user.sign("not signed by a frozen daemon\n")
        #expect(signature == nil)
        #expect(!signing.succeeded)
        #expect(ContinuousClock.now - started < .seconds(10), "\(signing)")
        #expect(signing.standardError.contains("did not answer"), "\(signing)")
    }

    /// `-O no-touch-required`: ssh-keygen signs without asking for
    /// presence (the key is asked with up=false), and the signed flags
    /// say there was none.
    @Test(arguments: ["ecdsa-sk", "ed25519-sk"]) func noTouchRequiredSignsWithoutPresence(type: String) async throws {
        let (daemon, user) = try await started()
        let publicKey = try user.enroll(type, options: ["no-touch-required"])
        let flags = try signAndVerify(user, "no touch\n", publicKey: publicKey, daemon: daemon)
        #expect(flags == 0x00, "flags \(String(describing: flags))")
    }

    /// `-K` needs credential management, which needs the PIN: the key has
    /// one, and askpass gives it. Two resident keys, one with a user name,
    /// recovered as OpenSSH names them; each recovered file signs what the
    /// enrolled public key verifies.
    @Test func residentKeysAreRecoveredByDashK() async throws {
        let (daemon, user) = try await started("name=K1,pin=1234")
        try user.answerPINPrompts(with: "1234")
        let ed25519 = try user.enroll("ed25519-sk", file: "id_ed", options: ["resident"])
        let ecdsa = try user.enroll("ecdsa-sk", file: "id_ec", options: ["resident", "user=alice"])

        let recovered = user.file("recovered")
        try FileManager.default.createDirectory(atPath: recovered, withIntermediateDirectories: false)
        let download = try user.run("ssh-keygen", ["-K", "-N", "", "-w", user.provider], directory: recovered)
        try #require(download.succeeded, "ssh-keygen -K: \(download)\nauthkeyd's log:\n\(daemon.log)")
        #expect(user.askpassPrompts.contains { $0.contains("Enter PIN for authenticator") }, "\(user.askpassPrompts)")
        let files = try FileManager.default.contentsOfDirectory(atPath: recovered).sorted()
        try #require(
            files == ["id_ecdsa_sk_rk_alice", "id_ecdsa_sk_rk_alice.pub", "id_ed25519_sk_rk", "id_ed25519_sk_rk.pub"],
            "\(download)\nauthkeyd's log:\n\(daemon.log)")

        for (name, enrolled) in [("id_ed25519_sk_rk", ed25519), ("id_ecdsa_sk_rk_alice", ecdsa)] {
            let publicKey = fileText("\(recovered)/\(name).pub")
            #expect(publicKeyPart(publicKey) == publicKeyPart(enrolled), "\(name).pub")
            let flags = try signAndVerify(user, "recovered \(name)\n", key: "recovered/\(name)", publicKey: enrolled, daemon: daemon)
            #expect(flags != nil, "\(name) signs")
        }
    }

    /// `-K` with a key without a PIN plugged in beside the one that holds
    /// the resident key: the provider lists the only key that can
    /// (credential management needs a PIN) without asking for a touch, so
    /// the key without a PIN never answers first and fails the download.
    @Test func dashKListsTheKeyWithAPINBesideOneWithout() async throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=No PIN", "--virtual-key", "name=With PIN,pin=1234"])
        _ = try await daemon.waitForKeys(2)
        let user = try OpenSSHUser(socketPath: daemon.socketPath)
        try user.answerPINPrompts(with: "1234")
        let enrolled = try user.enroll("ed25519-sk", file: "id_ed", options: ["resident", "device=v2"])

        let recovered = user.file("recovered")
        try FileManager.default.createDirectory(atPath: recovered, withIntermediateDirectories: false)
        let download = try user.run("ssh-keygen", ["-K", "-N", "", "-w", user.provider], directory: recovered)
        try #require(download.succeeded, "ssh-keygen -K: \(download)\nauthkeyd's log:\n\(daemon.log)")
        #expect(!download.standardError.contains("touch the one to use"), "no touch was asked: \(download.standardError)")
        let files = try FileManager.default.contentsOfDirectory(atPath: recovered).sorted()
        try #require(files == ["id_ed25519_sk_rk", "id_ed25519_sk_rk.pub"], "\(download)")
        #expect(publicKeyPart(fileText("\(recovered)/id_ed25519_sk_rk.pub")) == publicKeyPart(enrolled))
    }

    /// `-O verify-required`: ssh-keygen asks the PIN (through askpass:
    /// `SSH_ASKPASS_REQUIRE=force` uses it with no DISPLAY) and the
    /// signature carries user verification. A wrong PIN is refused and
    /// costs one retry. The PIN reaches no log.
    @Test func verifyRequiredAsksThePINAndRefusesAWrongOne() async throws {
        // PINs no log line could hold by chance (a pid, a time).
        let (pin, wrongPIN) = ("Kq7x-pin", "Wr0ng-pin")
        let (daemon, user) = try await started("name=K1,pin=\(pin)")
        try user.answerPINPrompts(with: pin)
        let publicKey = try user.enroll("ecdsa-sk", options: ["verify-required"])
        #expect(user.askpassPrompts.contains { $0.contains("Enter PIN for authenticator") }, "\(user.askpassPrompts)")

        let flags = try signAndVerify(user, "verified by PIN\n", publicKey: publicKey, daemon: daemon)
        #expect(user.askpassPrompts.contains { $0.contains("Enter PIN for ECDSA-SK key") }, "\(user.askpassPrompts)")
        // Presence and verification (SSH_SK_USER_VERIFICATION_REQD, 0x04), in the signed data.
        #expect(flags.map { $0 & 0x05 } == 0x05, "flags \(String(describing: flags))")

        let retries = try pinRetries(daemon)
        try user.answerPINPrompts(with: wrongPIN)
        let (refused, signature) = try user.sign("not with this PIN\n")
        #expect(signature == nil && refused.status != 0, "\(refused)")
        #expect(refused.standardError.contains("authkeyd-sk:"), "the provider says why: \(refused.standardError)")
        #expect(refused.standardError.lowercased().contains("pin"), "\(refused.standardError)")
        #expect(try pinRetries(daemon) == retries.map { $0 - 1 }, "one wrong PIN, one retry gone")
        #expect(!daemon.log.contains(pin) && !daemon.log.contains(wrongPIN), "a PIN in authkeyd's log")
        #expect(!refused.standardError.contains(wrongPIN))
    }
}
