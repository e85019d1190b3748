import AuthClient
import AuthProtocol

/// `authctl fingerprints info | list | enroll | rename | delete`: the
/// fingerprints a key with a sensor knows (CTAP bio enrollment). All but
/// `info` need the key's PIN.
struct FingerprintsCommand: Sendable {
    enum Action: String, Sendable {
        case info, list, enroll, rename, delete
    }

    static let usage = """
        fingerprints takes: info ID, list ID, enroll ID [--name TEXT], rename ID TEMPLATE NAME, \
        or delete ID TEMPLATE
        """

    let action: Action
    let key: ManagedKey
    let operands: [String]
    let name: String?

    init(_ arguments: Arguments) throws(UsageError) {
        (action, key, operands) = try ManagedKey.parse("fingerprints", arguments, usage: Self.usage) { (action: Action) in
            switch action {
            case .info, .list: (0, [])
            case .enroll: (0, ["name"])
            case .rename: (2, [])
            case .delete: (1, [])
            }
        }
        name = arguments.options["name"]
    }

    func run(_ client: AuthClient, _ console: Console) async throws {
        switch action {
        case .info:
            key.answerPrompts(on: client, console)
            guard let sensor = try await key.call(client, console, ManagementMethod.fingerprintSensor, key.params, as: FingerprintSensor.self) else { return }
            console.print(aligned([
                ("Sensor", sensor.kind == 2 ? "swipe" : sensor.kind == 1 ? "touch" : "kind \(sensor.kind)"),
                ("Samples to enroll", String(sensor.samplesRequired)),
            ]))
        case .list:
            key.answerPrompts(on: client, console)
            guard let list = try await key.call(client, console, ManagementMethod.listFingerprints, key.params, as: FingerprintList.self) else { return }
            guard !list.fingerprints.isEmpty else { return console.print("No fingerprints. authctl fingerprints enroll adds one.") }
            console.print(table(["TEMPLATE", "NAME"], list.fingerprints.map { [printable($0.templateId), printable($0.name ?? "-")] }))
        case .enroll:
            key.answerPrompts(on: client, console, cues: StatusCues(wording: EnrollmentCues().cue))
            let params = EnrollParams(authenticator: key.id, name: name)
            guard let enrolled = try await key.call(client, console, ManagementMethod.enrollFingerprint, params, as: Fingerprint.self) else { return }
            console.print("Enrolled fingerprint \(Self.describe(enrolled)).")
        case .rename:
            key.answerPrompts(on: client, console)
            let params = FingerprintParams(authenticator: key.id, templateId: operands[0], name: operands[1])
            guard let renamed = try await key.call(client, console, ManagementMethod.renameFingerprint, params, as: Fingerprint.self) else { return }
            console.print("Renamed fingerprint \(Self.describe(renamed)).")
        case .delete:
            key.answerPrompts(on: client, console)
            let params = FingerprintParams(authenticator: key.id, templateId: operands[0])
            guard try await key.call(client, console, ManagementMethod.deleteFingerprint, params, as: JSONValue.self) != nil else { return }
            console.print("Deleted fingerprint \(printable(operands[0])).")
        }
    }

    static func describe(_ fingerprint: Fingerprint) -> String {
        printable(fingerprint.templateId) + (fingerprint.name.map { " \"\(printable($0))\"" } ?? "")
    }
}
