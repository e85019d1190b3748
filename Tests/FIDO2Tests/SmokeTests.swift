import FIDO2
import Testing
import VirtualKey

@Suite struct SmokeTests {
    @Test func registerAndAuthenticate() throws {
        let key = try VirtualKey()
        let device = try key.openDevice()
        let info = try device.info()
        #expect(info.versions.contains("FIDO_2_1"))
        var request = MakeCredentialRequest(
            clientData: .hash([UInt8](repeating: 1, count: 32)), relyingParty: RelyingParty(id: "example.org", name: "Example"),
            user: UserEntity(id: [1, 2, 3], name: "alice", displayName: "Alice"))
        request.residentKey = .disabled
        let credential = try device.makeCredential(request)
        try credential.verify()
        var assertionRequest = GetAssertionRequest(relyingPartyID: "example.org", clientData: .hash([UInt8](repeating: 2, count: 32)))
        assertionRequest.allowList = [credential.credentialID]
        let assertion = try device.getAssertion(assertionRequest)
        try assertion.verify(es256PublicKey: credential.publicKey)
    }
}
