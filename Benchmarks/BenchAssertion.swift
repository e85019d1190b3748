import AuthClient
import AuthProtocol

/// Row 1's assertion on one daemon: a credential registered on its one
/// virtual key, and the `credentials.get` for it from a plain client.
struct BenchAssertion {
    let client: BlockingClient
    let params: JSONValue

    init(_ daemon: DaemonUnderTest) throws {
        guard let keyID = try daemon.waitForKeys(1).first else { throw BenchError("no key") }
        client = try daemon.connect()
        let created = try client.call("credentials.create", params: [
            "rp": ["id": "bench.example", "name": "Bench"],
            "user": ["id": "AQ", "name": "bench", "displayName": "bench"],
            "clientDataHash": .string(Base64URL.encode([UInt8](repeating: 1, count: 32))),
            "pubKeyCredParams": [["type": "public-key", "alg": -7]],
            "authenticatorSelection": ["residentKey": "discouraged", "userVerification": "discouraged"],
            "authenticator": .string(keyID),
        ])
        guard let credentialID = created["credential"]?["id"]?.stringValue else {
            throw BenchError("credentials.create returned no credential id")
        }
        params = [
            "rpId": "bench.example",
            "clientDataHash": .string(Base64URL.encode([UInt8](repeating: 2, count: 32))),
            "allowCredentials": [["type": "public-key", "id": .string(credentialID)]],
            "userVerification": "discouraged",
            "authenticator": .string(keyID),
        ]
        let first = try client.call("credentials.get", params: params)
        guard first["credential"]?["response"]?["signature"]?.stringValue?.isEmpty == false else {
            throw BenchError("credentials.get returned no signature")
        }
    }

    /// One `credentials.get`, in ms.
    func time() throws -> Double {
        let start = now()
        _ = try client.call("credentials.get", params: params)
        return milliseconds(start, now())
    }
}
