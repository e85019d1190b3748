import Crypto
import FIDO2
import VirtualKey

/// A virtual key configured for a test, and a libfido2 device open on it.
public func makeKey(_ configure: (inout VirtualKeyConfiguration) -> Void = { _ in }) throws -> VirtualKey {
    var configuration = VirtualKeyConfiguration()
    configure(&configuration)
    return try VirtualKey(configuration: configuration)
}

/// 32 random bytes, as a client data hash.
public func randomHash() -> [UInt8] { secureRandomBytes(32) }

/// A makeCredential request for `example.org` with sensible defaults.
public func registrationRequest(
    rpID: String = "example.org", userID: [UInt8] = [0x75, 0x01], userName: String = "alice",
    residentKey: Bool = false
) -> MakeCredentialRequest {
    var request = MakeCredentialRequest(
        clientData: .hash(randomHash()), relyingParty: RelyingParty(id: rpID, name: "Example"),
        user: UserEntity(id: userID, name: userName, displayName: userName.capitalized))
    request.residentKey = residentKey ? .enabled : .disabled
    return request
}

/// A getAssertion request for `example.org`.
public func assertionRequest(rpID: String = "example.org", allow: [[UInt8]] = []) -> GetAssertionRequest {
    var request = GetAssertionRequest(relyingPartyID: rpID, clientData: .hash(randomHash()))
    request.allowList = allow
    return request
}

extension String {
    var capitalized: String { prefix(1).uppercased() + dropFirst() }
}
