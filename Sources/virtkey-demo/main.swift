// virtkey-demo: walks a virtual security key through what a browser does
// with a real one — getInfo, register, authenticate, verify — entirely
// through libfido2, and prints each step.
import Crypto
import FIDO2
import Foundation
import VirtualKey

func step(_ number: Int, _ title: String) { print("\n\(number). \(title)") }
func detail(_ text: String) { print("   \(text)") }
func hex(_ bytes: [UInt8], limit: Int = 8) -> String {
    let shown = bytes.prefix(limit).map { String(format: "%02x", $0) }.joined()
    return bytes.count > limit ? "\(shown)… (\(bytes.count) bytes)" : shown
}
func flags(_ value: AuthenticatorDataFlags) -> String {
    var names: [String] = []
    if value.contains(.userPresent) { names.append("UP (user present)") }
    if value.contains(.userVerified) { names.append("UV (user verified)") }
    if value.contains(.attestedCredentialData) { names.append("AT") }
    if value.contains(.extensionData) { names.append("ED") }
    return names.joined(separator: ", ")
}

do {
    print("authkeyd virtual key demo: a software CTAP 2.1 authenticator, driven through libfido2's")
    print("custom I/O exactly as libfido2 drives a USB key (CTAPHID framing, CBOR, PIN protocol 2).")

    var configuration = VirtualKeyConfiguration()
    configuration.productName = "authkeyd Demo Key"
    configuration.presence = .after(.milliseconds(400))
    let key = try VirtualKey(configuration: configuration)
    let device = try key.openDevice()

    step(1, "getInfo")
    let info = try device.info()
    detail("product:     \(configuration.productName)")
    detail("versions:    \(info.versions.joined(separator: ", "))")
    detail("extensions:  \(info.extensions.joined(separator: ", "))")
    detail("AAGUID:      \(hex(info.aaguid, limit: 16))")
    detail("options:     " + info.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
    detail("PIN/UV auth protocols \(info.pinProtocols.map(String.init).joined(separator: ", ")); max message \(info.maxMessageSize) bytes")

    step(2, "register (makeCredential) for demo.example, user alice")
    detail("Touch your security key… (the simulated user touches it after 400 ms)")
    let clientDataHash = SHA256.hash(Array(#"{"type":"webauthn.create","challenge":"demo","origin":"https://demo.example"}"#.utf8))
    var registration = MakeCredentialRequest(
        clientData: .hash(clientDataHash), relyingParty: RelyingParty(id: "demo.example", name: "Demo"),
        user: UserEntity(id: Array("alice".utf8), name: "alice", displayName: "Alice"))
    registration.residentKey = .enabled
    let started = Date()
    let credential = try device.makeCredential(registration)
    detail(String(format: "done after %.0f ms", Date().timeIntervalSince(started) * 1000))
    detail("format:        \(credential.format)")
    detail("credential id: \(hex(credential.credentialID))")
    detail("public key:    ES256 \(hex(credential.publicKey))")
    detail("flags:         \(flags(credential.flags)); sign count \(credential.signCount)")
    let certificate = try CertificateSummary(der: credential.attestationCertificate)
    detail("attestation:   \(certificate.subject)")
    detail("               issued by \(certificate.issuer)")
    try credential.verify()
    detail("fido_cred_verify: attestation signature and certificate OK")

    step(3, "authenticate (getAssertion) with the new credential")
    var request = GetAssertionRequest(relyingPartyID: "demo.example", clientData: .hash(SHA256.hash(Array("challenge 2".utf8))))
    request.allowList = [credential.credentialID]
    let assertion = try device.getAssertion(request)
    let statement = assertion.statement(at: 0)
    detail("flags:      \(flags(statement.flags)); sign count \(statement.signCount)")
    detail("signature:  \(hex(statement.signature))")
    try assertion.verify(es256PublicKey: credential.publicKey)
    detail("fido_assert_verify: signature OK with the registered public key")

    step(4, "tampering is caught")
    var forged = statement.authenticatorData
    forged[32] |= 0x04
    do {
        try Assertion.forVerification(request: request, authenticatorData: forged, signature: statement.signature)
            .verify(es256PublicKey: credential.publicKey)
        detail("UNEXPECTED: a forged assertion verified")
        exit(1)
    } catch {
        detail("claiming UV in the signed data: \(error)")
    }

    step(5, "a PIN: set it, use it, get it wrong")
    try device.setPIN("246810")
    let verified = try key.openDevice().makeCredential(registration, pin: "246810")
    detail("registered with the PIN: flags \(flags(verified.flags))")
    do {
        _ = try key.openDevice().makeCredential(registration, pin: "000000")
    } catch {
        detail("wrong PIN: \(error)")
    }
    detail("PIN retries left: \(try key.openDevice().pinRetries()) of 8")

    print("\nAll steps passed. Serve a key on a socket for other programs with:")
    print("   authkeyd-virtkey --socket /tmp/authkeyd-key.sock --name \"My Test Key\"")
} catch {
    print("demo failed: \(error)")
    exit(1)
}
