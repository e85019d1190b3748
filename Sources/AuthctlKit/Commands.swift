import AuthClient
import AuthProtocol
import Glibc
import SystemKit

/// The subcommands, each a function of a connected client.
enum Commands {
    /// With `--json`, `list` and `info` print the daemon's result as it came
    /// (the protocol's own object): decoding it into the protocol's types
    /// and encoding it again only to print it would cost a one-call command
    /// more start-up time (the runtime's Codable metadata) than its call.
    static func list(_ client: BlockingClient, json: Bool, _ console: Console) throws(AuthClientError) {
        let result = try client.call(Method.listAuthenticators)
        if json { return console.print(result.jsonText) }
        let keys = try client.decode(AuthenticatorList.self, of: Method.listAuthenticators, from: result).authenticators
        guard !keys.isEmpty else { return console.print("No security keys. Plug one in, or see authkeyd(8) for virtual keys.") }
        console.print(table(
            ["ID", "NAME", "PRODUCT", "TRANSPORT", "PIN", "UV", "RESIDENT KEYS"],
            keys.map { key in
                [key.id, key.name ?? "-", key.product, key.transport.rawValue,
                 key.pin ? (key.pinSet ? "set" : "not set") : "-",
                 key.uv ? (key.uvSet ? "enrolled" : "not enrolled") : "-",
                 key.rk ? "yes" : "no"]
            }))
    }

    static func info(_ client: BlockingClient, id: String, json: Bool, _ console: Console) throws(AuthClientError) {
        // AuthenticatorParams, written out: encoding it would bring Codable in.
        let result = try client.call(Method.authenticatorInfo, params: ["authenticator": .string(id)])
        if json { return console.print(result.jsonText) }
        let details = try client.decode(AuthenticatorDetails.self, of: Method.authenticatorInfo, from: result)
        let key = details.authenticator, info = details.info
        let rows: [(label: String, value: String)] = [
            ("ID", key.id), ("Name", key.name ?? "-"), ("Product", key.product),
            ("Manufacturer", key.manufacturer.isEmpty ? "-" : key.manufacturer),
            ("Transport", key.transport.rawValue), ("Path", key.path),
            ("USB id", hex4(key.vendorId) + ":" + hex4(key.productId)),
            ("AAGUID", info.aaguid), ("Versions", info.versions.joined(separator: ", ")),
            ("Extensions", info.extensions.joined(separator: ", ")),
            ("Algorithms", info.algorithms.map { "\($0.type) \($0.alg)" }.joined(separator: ", ")),
            ("PIN", key.pin ? (key.pinSet ? "set, \(info.pinRetries.map { String($0) } ?? "?") attempts left" : "not set") : "not supported"),
            ("Minimum PIN length", String(info.minPinLength)),
            ("Built-in UV", key.uv ? (key.uvSet ? "enrolled, \(info.uvRetries.map { String($0) } ?? "?") attempts left" : "not enrolled") : "none"),
            ("Discoverable credentials", info.remainingDiscoverableCredentials.map { "\($0) slots free" } ?? "unknown"),
            ("PIN/UV auth protocols", info.pinProtocols.map { String($0) }.joined(separator: ", ")),
            ("Max message size", String(info.maxMsgSize)),
            ("Firmware", String(info.firmwareVersion)),
            ("Options", info.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")),
        ]
        console.print(aligned(rows))
    }

    static func watch(_ client: AuthClient, json: Bool, _ console: Console) async throws(AuthClientError) {
        let present = try await client.watchAuthenticators()
        if !json {
            console.print("Watching for security keys; Ctrl-C stops.")
            for key in present { console.print("present  \(key.id)  \(key.product) (\(key.transport.rawValue))") }
        }
        console.output.flush()
        for await notification in client.notifications {
            if json {
                console.print(RPCMessage.notification(method: notification.method, params: notification.params).json.jsonText)
            } else if let event = try? JSONValueDecoder().decode(AuthenticatorEvent.self, from: notification.params) {
                let verb = notification.method.split(separator: ".").last.map(String.init) ?? notification.method
                console.print("\(verb.padding(to: 8))  \(event.authenticator.id)  \(event.authenticator.product) (\(event.authenticator.transport.rawValue))")
            }
            console.output.flush()
        }
        throw .disconnected
    }

    static func select(_ client: AuthClient, timeout: Duration?, json: Bool, _ console: Console) async throws(AuthClientError) {
        if !json { console.output.writeError("Touch the security key you want to use…\n") }
        let key = try await client.selectByTouch(timeout: timeout)
        if json { return console.print(encode(AuthenticatorEvent(authenticator: key)).jsonText) }
        console.print("\(key.id)  \(key.product) (\(key.transport.rawValue))")
    }

    static func encode(_ value: some Encodable) -> JSONValue {
        (try? JSONValueEncoder().encode(value)) ?? .null
    }
}

/// Four hex digits, as USB ids are written.
func hex4(_ value: Int) -> String {
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
