import CBOR
import Crypto
import VirtualKey

/// The virtual key's inputs: raw 64-byte HID reports into its CTAPHID
/// transport, or CTAP2 requests into its command dispatcher, sent by a
/// host that can authenticate them with a real pinUvAuthToken so that the
/// fuzzer gets past the signature checks of credential management, bio
/// enrollment and config.
///
/// The first byte chooses (even: reports, odd: CTAP2 requests; reports
/// with bit 0x02 set go to a key of the U2F personality, whose APDUs come
/// in CTAPHID_MSG), the second configures the key (`KeySetup`). The key
/// must never crash or hang, and its CTAP2 replies must be well formed.
public func fuzzVirtualKey(_ data: [UInt8]) {
    var input = FuzzInput(data)
    let mode = input.byte()
    var setup = KeySetup(input.byte())
    if mode & 0x03 == 0x02 { setup.speakOnlyU2F() }
    let key: VirtualKey
    FuzzTrace.log("making a key")
    do { key = try VirtualKey(configuration: setup.configuration) } catch {
        return require(false, "a virtual key could not be made: \(error)")
    }
    FuzzTrace.log("key made")
    if mode & 1 == 0 {
        ReportSession(key: key).run(&input)
    } else {
        CommandSession(key: key, setup: setup).run(&input)
    }
}

/// A key configuration from one byte, bit by bit.
struct KeySetup {
    var configuration = VirtualKeyConfiguration()
    var pin: [UInt8]?

    static let initialPIN = "1234"

    init(_ bits: UInt8) {
        if bits & 0x01 != 0 {
            configuration.initialPIN = Self.initialPIN
            pin = Array(Self.initialPIN.utf8)
        }
        if bits & 0x02 != 0 { configuration.fingerprintSensor = false }
        if bits & 0x04 != 0 { configuration.userVerification = .noMatch }
        if bits & 0x08 != 0 { configuration.presence = .denied }
        configuration.attestation = [.packed, .selfAttestation, .none, .packed][Int(bits >> 4 & 0x03)]
        if bits & 0x40 != 0 { configuration.residentCredentialCapacity = 2 }
        if bits & 0x80 != 0 { configuration.enrollmentSamples = 1 }
    }

    /// The U2F personality, which takes no PIN.
    mutating func speakOnlyU2F() {
        configuration.ctap = .u2f
        configuration.initialPIN = nil
        pin = nil
    }
}

// MARK: - Raw reports

/// Each record is a control byte and a 64-byte report (zero-padded at the
/// end of the input). Control bits: 0x01 send from a second host; 0x02
/// reconnect that host first; 0x04 power-cycle the key first.
///
/// When a report completes a CBOR request, the harness waits for the reply
/// before the next report, as a host would: the key's firmware never runs
/// beside later reports, and an input always does the same.
private struct ReportSession {
    let key: VirtualKey

    func run(_ input: inout FuzzInput) {
        let hosts = [KeyHost(key: key), KeyHost(key: key)]
        var requests = [OutgoingRequests(), OutgoingRequests()]
        while !input.isAtEnd {
            let control = input.byte()
            var report = input.bytes(CTAPHID.reportSize)
            report += [UInt8](repeating: 0, count: CTAPHID.reportSize - report.count)
            let index = Int(control & 0x01)
            if control & 0x04 != 0 {
                key.unplug()
                key.plugIn()
                hosts.forEach { $0.reconnect() }
                requests = [OutgoingRequests(), OutgoingRequests()]
            } else if control & 0x02 != 0 {
                hosts[index].reconnect()
                requests[index] = OutgoingRequests()
            }
            FuzzTrace.log("host \(index) sends \(FuzzTrace.hex(report, limit: 12))")
            hosts[index].send(report)
            if case .initialization(let channel, CTAPHIDCommand.initialize.rawValue, 8, _)? = CTAPHIDPacket(report: report),
                channel != CTAPHID.broadcastChannel
            {
                // INIT resynchronises the channel, whichever host began its message.
                for host in requests.indices { requests[host].refused(channel: channel) }
            }
            if let channel = requests[index].sent(report) {
                // The answer, or a refusal (CTAPHID_ERROR), must come.
                let reply = hosts[index].message(on: channel, timeoutMilliseconds: KeyHost.hangLimitMilliseconds)
                require(reply != nil, "no reply to a whole CBOR request on channel \(channel)")
            }
            // Refusals of the messages begun come at once.
            for (host, packets) in zip(hosts.indices, hosts.map { $0.drain() }) {
                for case .initialization(let channel, CTAPHIDCommand.error.rawValue, _, _)? in packets.map(CTAPHIDPacket.init) {
                    requests[host].refused(channel: channel)
                }
            }
        }
        hosts.forEach { $0.connection.close() }
        KeyHost(key: key).settle()
    }
}

/// What a host has sent of each channel's message, to know when a CBOR
/// request is whole (the key must then answer it) without asking the key.
struct OutgoingRequests {
    private var incomplete: [UInt32: (remaining: Int, sequence: UInt8)] = [:]

    /// Takes a report the host sent; returns the channel of the CBOR
    /// request it completed, if it did.
    mutating func sent(_ report: [UInt8]) -> UInt32? {
        switch CTAPHIDPacket(report: report) {
        case .initialization(let channel, let command, let length, _)?:
            guard command != CTAPHIDCommand.cancel.rawValue else { return nil }
            // A new message replaces the last (INIT resynchronises the channel).
            incomplete[channel] = nil
            // A U2F key's MSG is answered as a CBOR request is; a CTAP2 key refuses it at once.
            guard command == CTAPHIDCommand.cbor.rawValue || command == CTAPHIDCommand.msg.rawValue, length > 0,
                length <= CTAPHID.maxMessageSize
            else { return nil }
            guard length > CTAPHID.initializationDataSize else { return channel }
            incomplete[channel] = (length - CTAPHID.initializationDataSize, 0)
        case .continuation(let channel, let sequence, _)?:
            guard let message = incomplete[channel], sequence == message.sequence else {
                incomplete[channel] = nil
                return nil
            }
            let remaining = message.remaining - CTAPHID.continuationDataSize
            incomplete[channel] = remaining > 0 ? (remaining, sequence + 1) : nil
            return remaining > 0 ? nil : channel
        case nil:
            break
        }
        return nil
    }

    /// The key dropped the message on `channel` (it answered CTAPHID_ERROR,
    /// or INIT resynchronised the channel).
    mutating func refused(channel: UInt32) { incomplete[channel] = nil }
}

// MARK: - CTAP2 requests

/// Records (`FuzzInput.record`) of these kinds (the low three bits):
/// 0 a raw request (command byte and CBOR); 1 the same, authenticated with
/// the host's pinUvAuthToken (got first if it has none); 2 get a token
/// (payload: permissions byte, then rp id; kind bit 0x08: by fingerprint,
/// 0x10: with the pre-2.1 getPinToken); 3 setPIN and 4 changePIN to the
/// payload; 5 an event (power cycle, the user's behaviour, PIN protocol,
/// channel); 6 and 7 a CTAPHID message of any command on the host's channel.
final class CommandSession {
    private let key: VirtualKey
    private let host: KeyHost
    private var channel: UInt32
    private var pin: [UInt8]?
    private var token: [UInt8]?
    private var version = 2
    /// Ids the key handed out, for requests that name one: a byte string
    /// `C1 ED n` in a request stands for the n-th credential id seen,
    /// `7E 4D n` for the n-th fingerprint template id.
    private var credentialIDs: [[UInt8]] = []
    private var templateIDs: [[UInt8]] = []
    static let credentialPlaceholder: [UInt8] = [0xC1, 0xED]
    static let templatePlaceholder: [UInt8] = [0x7E, 0x4D]

    init(key: VirtualKey, setup: KeySetup) {
        self.key = key
        host = KeyHost(key: key)
        channel = host.allocateChannel()
        pin = setup.pin
    }

    func run(_ input: inout FuzzInput) {
        while let (kind, payload) = input.record() {
            switch kind & 0x07 {
            case 0: _ = request(payload)
            case 1: authenticated(payload)
            case 2:
                let method: TokenMethod = kind & 0x10 != 0 ? .legacy : kind & 0x08 != 0 ? .fingerprint : .pin
                let rpID = payload.count > 1 ? String(decoding: payload.dropFirst(), as: UTF8.self) : nil
                token = acquireToken(permissions: payload.first ?? 0, rpID: rpID, method: method)
            case 3: setPIN(payload)
            case 4: changePIN(payload)
            case 5: event(payload.first ?? 0)
            default: ctaphid(payload)
            }
        }
        host.connection.close()
    }

    // MARK: Requests

    /// Sends a CTAP2 request and checks the reply's shape: a status byte,
    /// and on success nothing or a CBOR map.
    @discardableResult
    private func request(_ bytes: [UInt8]) -> (status: UInt8, body: CBORMap?)? {
        var bytes = bytes
        if bytes.count > 1, let parameters = try? CBOR.decode(bytes.dropFirst()) {
            let named = substituted(parameters)
            if named != parameters { bytes = [bytes[0]] + named.encoded() }
        }
        let reply = host.cbor(channel: channel, bytes)
        FuzzTrace.log("CTAP2 \(FuzzTrace.hex(bytes)) -> \(reply.map { FuzzTrace.hex($0) } ?? "no CTAP2 reply")")
        guard let reply else { return nil }
        guard reply[0] == 0 else {
            require(reply.count == 1, "an error reply carries more than its status")
            return (reply[0], nil)
        }
        guard reply.count > 1 else { return (0, nil) }
        let body = try? CBOR.decode(reply.dropFirst())
        require(body?.mapValue != nil, "a success reply to command \(bytes[0]) is not a CBOR map")
        if let map = body?.mapValue { learnIDs(command: bytes[0], reply: map) }
        return (0, body?.mapValue)
    }

    /// The item with its placeholders replaced by the ids they stand for.
    private func substituted(_ item: CBOR) -> CBOR {
        switch item {
        case .bytes(let bytes) where bytes.count == 3:
            let known = bytes.starts(with: Self.credentialPlaceholder) ? credentialIDs
                : bytes.starts(with: Self.templatePlaceholder) ? templateIDs : []
            return known.isEmpty ? item : .bytes(known[Int(bytes[2]) % known.count])
        case .array(let items): return .array(items.map(substituted))
        case .map(let map):
            var named = CBORMap()
            for (key, value) in map.entries { named[key] = substituted(value) }
            return .map(named)
        case .tagged(let tag, let inner): return .tagged(tag, substituted(inner))
        default: return item
        }
    }

    /// Remembers the credential and template ids in a successful reply.
    private func learnIDs(command: UInt8, reply: CBORMap) {
        func remember(_ id: [UInt8]?, in list: inout [[UInt8]]) {
            guard let id, !list.contains(id) else { return }
            list = list.suffix(15) + [id]
        }
        switch command {
        case CTAP2Command.makeCredential.rawValue:
            // Authenticator data: rpIdHash(32) flags(1) signCount(4) aaguid(16) length(2) id.
            guard let data = reply[2]?.bytesValue, data.count >= 55 else { return }
            let end = 55 + (Int(data[53]) << 8 | Int(data[54]))
            if end <= data.count { remember(Array(data[55..<end]), in: &credentialIDs) }
        case CTAP2Command.getAssertion.rawValue, CTAP2Command.getNextAssertion.rawValue:
            remember(reply[1]?.mapValue?["id"]?.bytesValue, in: &credentialIDs)
        case CTAP2Command.credentialManagement.rawValue, CTAP2Command.credentialManagementPreview.rawValue:
            remember(reply[7]?.mapValue?["id"]?.bytesValue, in: &credentialIDs)
        case CTAP2Command.bioEnrollment.rawValue, CTAP2Command.bioEnrollmentPreview.rawValue:
            remember(reply[4]?.bytesValue, in: &templateIDs)
            for template in reply[7]?.arrayValue ?? [] { remember(template.mapValue?[1]?.bytesValue, in: &templateIDs) }
        default:
            break
        }
    }

    private func clientPIN(_ parameters: CBORMap) -> (status: UInt8, body: CBORMap?)? {
        request([CTAP2Command.clientPIN.rawValue] + CBOR.map(parameters).encoded())
    }

    /// Where a command carries its pinUvAuthParam, and what it signs.
    private func authenticated(_ payload: [UInt8]) {
        guard let command = payload.first, var map = (try? CBOR.decode(payload.dropFirst())).map(substituted)?.mapValue,
            let slots = PINUVAuthSlots(command: command, parameters: map)
        else {
            request(payload)
            return
        }
        if token == nil {
            token = acquireToken(permissions: slots.permission, rpID: slots.rpID, method: .pin)
        }
        map[slots.parameterKey] = .bytes(
            PlatformPIN.authenticate(slots.message, key: token ?? [UInt8](repeating: 0, count: 32), version: version))
        map[slots.protocolKey] = .int(version)
        if command == CTAP2Command.getAssertion.rawValue { encryptHMACSalt(&map) }
        request([command] + CBOR.map(map).encoded())
    }

    /// An hmac-secret input given as plain salt bytes becomes a real one:
    /// salts encrypted and authenticated with a fresh shared secret.
    private func encryptHMACSalt(_ map: inout CBORMap) {
        guard var extensions = map[4]?.mapValue, let salt = extensions["hmac-secret"]?.bytesValue,
            let agreement = keyAgreement()
        else { return }
        let padded = Array(salt.prefix(64)) + [UInt8](repeating: 0, count: (salt.count > 32 ? 64 : 32) - min(64, salt.count))
        let encrypted = agreement.encrypt(padded)
        extensions["hmac-secret"] = .map([
            1: agreement.coseKey, 2: .bytes(encrypted), 3: .bytes(agreement.authenticate(encrypted)), 4: .int(version),
        ])
        map[4] = .map(extensions)
    }

    // MARK: PIN and tokens

    private enum TokenMethod {
        case pin
        case fingerprint
        case legacy
    }

    private func keyAgreement() -> PlatformPIN? {
        PlatformPIN(version: version, keyAgreement: clientPIN([1: .int(version), 2: 2])?.body?[1])
    }

    private func acquireToken(permissions: UInt8, rpID: String?, method: TokenMethod) -> [UInt8]? {
        guard let agreement = keyAgreement() else { return nil }
        var parameters: CBORMap = [1: .int(version), 3: agreement.coseKey]
        switch method {
        case .pin, .legacy:
            parameters[2] = method == .pin ? 9 : 5
            parameters[6] = .bytes(agreement.pinHashEncrypted(pin ?? []))
        case .fingerprint:
            parameters[2] = 6
        }
        if method != .legacy {
            parameters[9] = .unsigned(UInt64(permissions))
            if let rpID { parameters[0x0A] = .text(rpID) }
        }
        guard let encrypted = clientPIN(parameters)?.body?[2]?.bytesValue else { return nil }
        return agreement.decrypt(encrypted)
    }

    private func setPIN(_ newPIN: [UInt8]) {
        guard let agreement = keyAgreement() else { return }
        let encrypted = agreement.newPINEncrypted(newPIN)
        let reply = clientPIN([
            1: .int(version), 2: 3, 3: agreement.coseKey, 4: .bytes(agreement.authenticate(encrypted)), 5: .bytes(encrypted),
        ])
        if reply?.status == 0 { pin = newPIN }
    }

    private func changePIN(_ newPIN: [UInt8]) {
        guard let agreement = keyAgreement() else { return }
        let newEncrypted = agreement.newPINEncrypted(newPIN)
        let hashEncrypted = agreement.pinHashEncrypted(pin ?? [])
        let reply = clientPIN([
            1: .int(version), 2: 4, 3: agreement.coseKey, 4: .bytes(agreement.authenticate(newEncrypted + hashEncrypted)),
            5: .bytes(newEncrypted), 6: .bytes(hashEncrypted),
        ])
        if reply?.status == 0 {
            pin = newPIN
            token = nil
        }
    }

    // MARK: Events and CTAPHID

    private func event(_ choice: UInt8) {
        switch choice % 8 {
        case 0:
            key.unplug()
            key.plugIn()
            host.reconnect()
            channel = host.allocateChannel()
            token = nil
        case 1: key.presence = .immediate
        case 2: key.presence = .denied
        case 3: key.userVerification = .match
        case 4: key.userVerification = .noMatch
        case 5:
            version = 3 - version
            token = nil
        case 6: token = nil
        default: channel = host.allocateChannel()
        }
    }

    /// A CTAPHID message on the host's channel: the first payload byte is
    /// the command. CBOR goes through `request`, so its reply is awaited;
    /// every other command is answered (or ignored) at once.
    private func ctaphid(_ payload: [UInt8]) {
        let command = (payload.first ?? 0) & 0x7F
        guard command != CTAPHIDCommand.cbor.rawValue else {
            request(Array(payload.dropFirst()))
            return
        }
        host.drain()
        host.send(channel: channel, command: command, payload: Array(payload.dropFirst()))
        host.drain()
    }
}

/// Where an authenticated CTAP2 command carries its pinUvAuthParam, and
/// what that is computed over (CTAP 2.1 §6).
struct PINUVAuthSlots {
    var parameterKey: Int
    var protocolKey: Int
    /// What the pinUvAuthParam is computed over.
    var message: [UInt8]
    /// The token permission the command needs, and the rp id it is bound to.
    var permission: UInt8
    var rpID: String?

    init?(command: UInt8, parameters map: CBORMap) {
        func byte(_ key: Int) -> UInt8 { UInt8(truncatingIfNeeded: map[key]?.unsignedValue ?? 0) }
        func encoded(_ key: Int) -> [UInt8] { map[key]?.encoded() ?? [] }
        switch CTAP2Command(rawValue: command) {
        case .makeCredential:
            (parameterKey, protocolKey, permission) = (8, 9, 0x01)
            message = map[1]?.bytesValue ?? []
            rpID = map[2]?.mapValue?["id"]?.textValue
        case .getAssertion:
            (parameterKey, protocolKey, permission) = (6, 7, 0x02)
            message = map[2]?.bytesValue ?? []
            rpID = map[1]?.textValue
        case .credentialManagement, .credentialManagementPreview:
            (parameterKey, protocolKey, permission) = (4, 3, 0x04)
            message = [byte(1)] + encoded(2)
        case .bioEnrollment, .bioEnrollmentPreview:
            (parameterKey, protocolKey, permission) = (5, 4, 0x08)
            message = [byte(1), byte(2)] + encoded(3)
        case .config:
            (parameterKey, protocolKey, permission) = (4, 3, 0x20)
            message = [UInt8](repeating: 0xFF, count: 32) + [CTAP2Command.config.rawValue, byte(1)] + encoded(2)
        case .largeBlobs:
            (parameterKey, protocolKey, permission) = (5, 6, 0x10)
            let offset = UInt32(truncatingIfNeeded: map[3]?.unsignedValue ?? 0)
            message =
                [UInt8](repeating: 0xFF, count: 32) + [CTAP2Command.largeBlobs.rawValue, 0x00]
                + withUnsafeBytes(of: offset.littleEndian) { [UInt8]($0) } + SHA256.hash(map[2]?.bytesValue ?? [])
        default:
            return nil
        }
    }
}
