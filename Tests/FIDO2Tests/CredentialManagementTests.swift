import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// credentialManagement through libfido2 (which sends the 0x41 preview command).
@Suite struct CredentialManagementTests {
    @Test func enumerateUpdateAndDelete() throws {
        let key = try makeKey { $0.initialPIN = "1234"; $0.residentCredentialCapacity = 10 }
        let device = try key.openDevice()
        #expect(try device.credentialMetadata(pin: "1234") == CredentialMetadata(existing: 0, remaining: 10))
        #expect(throws: FIDO2Error.noCredentials) { try device.storedRelyingParties(pin: "1234") }

        var protected = registrationRequest(userID: [1], userName: "alice", residentKey: true)
        protected.credentialProtection = .userVerificationRequired
        let alice = try device.makeCredential(protected, pin: "1234")
        let bob = try device.makeCredential(registrationRequest(userID: [2], userName: "bob", residentKey: true), pin: "1234")
        _ = try device.makeCredential(registrationRequest(rpID: "other.example", userID: [3], residentKey: true), pin: "1234")
        _ = try device.makeCredential(registrationRequest(userID: [4]), pin: "1234")  // not discoverable

        #expect(try device.credentialMetadata(pin: "1234") == CredentialMetadata(existing: 3, remaining: 7))
        let parties = try device.storedRelyingParties(pin: "1234")
        #expect(parties.map(\.id) == ["example.org", "other.example"])
        #expect(parties[0].name == "Example")
        #expect(parties[0].idHash.count == 32)

        let stored = try device.storedCredentials(relyingPartyID: "example.org", pin: "1234")
        #expect(stored.map(\.credentialID) == [bob.credentialID, alice.credentialID])
        #expect(stored.map(\.user.name) == ["bob", "alice"])
        #expect(stored[1].protection == .userVerificationRequired)
        #expect(stored[1].publicKey == alice.publicKey)

        try device.updateStoredCredentialUser(
            credentialID: bob.credentialID, user: UserEntity(id: [2], name: "robert", displayName: "Robert"), pin: "1234")
        #expect(try device.storedCredentials(relyingPartyID: "example.org", pin: "1234").first?.user.name == "robert")
        #expect(throws: FIDO2Error.self, "the user id must stay") {
            try device.updateStoredCredentialUser(credentialID: bob.credentialID, user: UserEntity(id: [9]), pin: "1234")
        }

        try device.deleteStoredCredential(id: bob.credentialID, pin: "1234")
        // Listed again through libfido2: gone from the key itself.
        #expect(try device.storedCredentials(relyingPartyID: "example.org", pin: "1234").map(\.credentialID) == [alice.credentialID])
        #expect(throws: FIDO2Error.noCredentials) {
            try device.getAssertion(assertionRequest(allow: [bob.credentialID]), pin: "1234")
        }
        #expect(throws: FIDO2Error.noCredentials) { try device.deleteStoredCredential(id: bob.credentialID, pin: "1234") }
        #expect(try device.credentialMetadata(pin: "1234").existing == 2)
    }

    @Test func aWrongPINGetsNothing() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        let device = try key.openDevice()
        #expect(throws: FIDO2Error.pinInvalid) { try device.credentialMetadata(pin: "9999") }
    }
}
