import Crypto
import FIDO2
import HIDReports
import VirtualKey
import SystemKit
import VirtualKeyDevice

/// Starting inputs for `fuzzDeviceReplies`: each script run once against a
/// virtual key made ready for it (credentials, PIN, fingerprints), with the
/// key's replies recorded as the records `ScriptedDevice` plays back.
enum DeviceReplySeeds {
    static func all() -> [(name: String, input: [UInt8])] {
        DeviceScript.all.enumerated().compactMap { index, script in
            guard let input = record(script, index: UInt8(index)) else { return nil }
            return ("seed-\(script.name)", input)
        }
    }

    private static func record(_ script: DeviceScript, index: UInt8) -> [UInt8]? {
        var configuration = VirtualKeyConfiguration()
        configuration.initialPIN = KeySetup.initialPIN
        configuration.enrollmentSamples = 2
        guard let key = try? VirtualKey(configuration: configuration), let parameters = prepare(key, for: script.name)
        else { return nil }
        let recorder = RecordingConnection(key.connect())
        guard let device = try? Device.open(connection: recorder, name: "recording", timeout: .seconds(5)) else { return nil }
        script.run(device, parameters)
        device.close()
        // The capability flags as the fuzz input gives them (xor 0x04).
        var writer = FuzzInputWriter(header: [index, recorder.capabilities ^ 0x04])
        for (kind, payload) in recorder.replies { writer.record(kind, payload) }
        return writer.bytes
    }

    /// Puts on the key what the script will look for; the parameters that name it.
    private static func prepare(_ key: VirtualKey, for name: String) -> DeviceScript.Parameters? {
        var parameters = DeviceScript.Parameters()
        guard let device = try? key.openDevice() else { return nil }
        defer { device.close() }
        func register(user: UInt8, resident: Bool, rpID: String = parameters.rpID) -> [UInt8]? {
            var request = MakeCredentialRequest(
                clientData: .hash(SHA256.hash([user])), relyingParty: RelyingParty(id: rpID, name: "Example"),
                user: UserEntity(id: [0x75, user], name: "user\(user)", displayName: "User \(user)"))
            request.residentKey = resident ? .enabled : .disabled
            request.hmacSecret = true
            request.credentialBlob = [user]
            return (try? device.makeCredential(request, pin: parameters.pin))?.credentialID
        }
        switch name {
        case "assert":
            parameters.credentialID = register(user: 1, resident: false) ?? []
        case "assert-pin-extensions", "credentials":
            _ = register(user: 1, resident: true)
            _ = register(user: 2, resident: true)
            _ = register(user: 3, resident: true, rpID: "other.example")
        default:
            break
        }
        return parameters
    }
}

/// A connection to a virtual key that keeps the key's replies, reassembled
/// into messages, as `ScriptedDevice` records; INIT replies are left out
/// (the scripted device makes its own).
private final class RecordingConnection: HIDReportConnection {
    private let inner: InProcessConnection
    private struct State {
        var replies: [(kind: UInt8, payload: [UInt8])] = []
        var message: (command: UInt8, length: Int, payload: [UInt8])?
        var capabilities: UInt8 = 0
    }
    private let state = Protected(State())

    init(_ inner: InProcessConnection) { self.inner = inner }

    var replies: [(kind: UInt8, payload: [UInt8])] { state.withLock { $0.replies } }
    var capabilities: UInt8 { state.withLock { $0.capabilities } }

    func send(report: [UInt8]) -> Bool { inner.send(report: report) }
    func close() { inner.close() }

    func receive(timeoutMilliseconds: Int) -> [UInt8]? {
        guard let report = inner.receive(timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        state.withLock { state in
            switch CTAPHIDPacket(report: report) {
            case .initialization(_, let command, let length, let data)?:
                state.message = (command, length, Array(data.prefix(length)))
            case .continuation(_, _, let data)?:
                guard var message = state.message else { return }
                message.payload += data.prefix(message.length - message.payload.count)
                state.message = message
            case nil:
                return
            }
            guard let message = state.message, message.payload.count >= message.length else { return }
            state.message = nil
            switch CTAPHIDCommand(rawValue: message.command) {
            case .initialize?: state.capabilities = message.payload.count > 16 ? message.payload[16] : 0
            case .cbor?: state.replies.append((0, message.payload))
            case .keepalive?: state.replies.append((1, message.payload))
            case .error?: state.replies.append((2, message.payload))
            default: state.replies.append((3, report))
            }
        }
        return report
    }
}
