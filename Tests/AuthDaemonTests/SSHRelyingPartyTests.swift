import AuthClient
import AuthProtocol
import BrokerTestSupport
import CBOR
import Crypto
import TestSupport
import Testing

/// The requests OpenSSH's provider makes, as `sk_enroll` and `sk_sign`
/// make them: relying party `ssh:` (or `ssh:NAME`, `-O application=`), a
/// clientDataHash instead of a challenge, direct attestation, a
/// discoverable credential with credProtect enforced, then a signature
/// with the key handle as the allow list. Checked by hand: the rpIdHash,
/// the algorithm, credProtect on the key, the signature over
/// authenticatorData ‖ clientDataHash.
@Suite(.timeLimit(.minutes(2))) struct SSHRelyingPartyTests {
    static func enrollParams(application: String, algorithm: Int, hash: [UInt8]) -> CreateParams {
        var params = WebAuthnFixtures.createParams(
            rpID: application, user: "openssh", userID: Array("openssh".utf8), residentKey: .required, attestation: .direct)
        params.challenge = nil
        params.clientDataHash = Base64URLBytes(hash)
        params.pubKeyCredParams = [.init(alg: algorithm)]
        params.extensions = CreateExtensions()
        params.extensions?.credentialProtectionPolicy = "userVerificationOptionalWithCredentialIDList"
        params.extensions?.enforceCredentialProtectionPolicy = true
        return params
    }

    @Test(arguments: [("ssh:", -7), ("ssh:", -8), ("ssh:git.example", -7), ("ssh:git.example", -8)])
    func anSSHApplicationEnrollsAndSigns(application: String, algorithm: Int) async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=K,pin=1234"])
        let client = try daemon.client()
        // The PIN to register, to sign (userVerification preferred) and to list.
        client.setUI(ScriptedUI(pins: ["1234", "1234", "1234"]))

        let enrollHash = randomHash()
        let created = try await client.createCredential(Self.enrollParams(application: application, algorithm: algorithm, hash: enrollHash))
        #expect(created.clientDataHash?.bytes == enrollHash)
        #expect(created.credential["response"]?["publicKeyAlgorithm"]?.integerValue == Int64(algorithm))
        #expect(WebAuthnFixtures.isMade(for: application, created.credential))
        let attestationObject = try #require(
            created.credential["response"]?["attestationObject"]?.stringValue.flatMap(Base64URL.decode))
        #expect(try CBOR.decode(attestationObject).mapValue?["fmt"] == "packed", "direct attestation kept")
        let id = try #require(created.credential["id"]?.stringValue)
        let publicKey = try #require(CredentialKeys.attestedPublicKey(of: created))

        let signHash = randomHash()
        var get = WebAuthnFixtures.getParams(rpID: application, allow: [id])
        get.challenge = nil
        get.clientDataHash = Base64URLBytes(signHash)
        let asserted = try await client.getCredential(get)
        #expect(WebAuthnFixtures.isMade(for: application, asserted.credential))
        #expect(CredentialKeys.signatureVerifies(asserted, clientDataHash: signHash, publicKey: publicKey))
        #expect(try #require(CredentialKeys.flags(of: asserted)) & 0x01 != 0, "UP set: a touch, as asked")

        let listed = try await client.storedCredentials(on: "v1", rpId: application)
        let credential = try #require(listed.relyingParties.first?.credentials.first)
        #expect(listed.relyingParties.map(\.id) == [application])
        #expect(credential.credentialId == id)
        #expect(credential.credProtect == 2, "credProtect as asked and enforced")
    }
}
