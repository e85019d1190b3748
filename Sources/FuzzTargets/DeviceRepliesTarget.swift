import CBOR
import Crypto
import FIDO2
import HIDReports
import VirtualKey
import SystemKit

/// Device replies into the FIDO2 layer: libfido2 talks through custom I/O
/// to a `ScriptedDevice` that answers CTAPHID_INIT properly (so that
/// libfido2 goes on) and every later request with the fuzzer's bytes. A
/// script of `Device` calls then reads what libfido2 made of them through
/// the Swift wrappers (`AuthenticatorInfo`, `ParsedAuthenticatorData`, …).
///
/// The first byte chooses the script (`DeviceScript`), the second the
/// capability flags of the INIT reply (xor 0x04: CBOR unless set); the rest
/// are reply records (`ScriptedDevice`). Nothing may crash or hang.
///
/// Returns how many replies the device withheld because libcbor would
/// allocate for items they declare and do not hold (for the regression
/// tests of Fuzz/known-issues/devicereplies).
@discardableResult
public func fuzzDeviceReplies(_ data: [UInt8]) -> Int {
    if FuzzTrace.isEnabled { FIDO2Library.enableDebugLogging() }
    var input = FuzzInput(data)
    let script = DeviceScript.all[Int(input.byte()) % DeviceScript.all.count]
    let capabilities = input.byte() ^ 0x04
    let connection = ScriptedDevice(replies: input, capabilities: capabilities)
    guard let device = DeviceScript.attempt("open", { try Device.open(connection: connection, name: "fuzz", timeout: .seconds(2)) })
    else { return connection.withheldReplies }
    _ = (device.isFIDO2, device.hasPIN, device.hasUV, device.supportsPIN, device.supportsUV, device.hidVersion,
         device.supportsCredentialManagement, device.supportsCredentialProtection, device.supportsPermissions)
    script.run(device, DeviceScript.Parameters())
    device.close()
    return connection.withheldReplies
}

/// A fake authenticator whose replies are read from records: kind (low
/// two bits) 0 a CTAPHID_CBOR reply (status byte and CBOR), 1 a KEEPALIVE
/// (payload: its status), 2 a CTAPHID_ERROR (payload: its code), 3 raw
/// reports, 64 bytes each. CTAPHID_INIT is answered by the device itself,
/// with the host's nonce; when the records run out, reads time out, as
/// they do for a reply withheld (`allocatesForMissingItems`).
final class ScriptedDevice: HIDReportConnection {
    /// The channel INIT hands out.
    static let channel: UInt32 = 0x4655_5A5A

    private struct State {
        var replies: FuzzInput
        var pending: [[UInt8]] = []
        /// The CTAP2 command of the request being answered.
        var command: UInt8 = 0
        var closed = false
        var withheld = 0
    }

    private let state: Protected<State>
    private let capabilities: UInt8

    init(replies: FuzzInput, capabilities: UInt8) {
        state = Protected(State(replies: replies))
        self.capabilities = capabilities
    }

    /// The replies not sent because libcbor would allocate for what they lack.
    var withheldReplies: Int { state.withLock { $0.withheld } }

    func send(report: [UInt8]) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            guard case .initialization(let channel, let command, _, let data)? = CTAPHIDPacket(report: report),
                command != CTAPHIDCommand.cancel.rawValue
            else { return true }
            // A new request: what was left of the last reply is stale.
            FuzzTrace.log("host sends: command \(FuzzTrace.hex([command])), \(FuzzTrace.hex(data))")
            state.pending = []
            state.command = command == CTAPHIDCommand.cbor.rawValue ? data[0] : 0
            if command == CTAPHIDCommand.initialize.rawValue {
                let payload = Array(data.prefix(8)) + ScriptedDevice.bigEndian(Self.channel) + [2, 1, 0, 0, capabilities]
                state.pending = CTAPHIDPacket.reports(channel: channel, command: command, payload: payload)
            }
            return true
        }
    }

    func receive(timeoutMilliseconds: Int) -> [UInt8]? {
        state.withLock { state in
            guard !state.closed else { return nil }
            if state.pending.isEmpty, let (kind, payload) = state.replies.record() {
                FuzzTrace.log("device replies: kind \(kind & 0x03), \(FuzzTrace.hex(payload))")
                if let reports = Self.reports(kind: kind, payload: payload, answering: state.command) {
                    state.pending = reports
                } else {
                    FuzzTrace.log("withheld: libcbor would allocate for items the reply does not hold")
                    state.withheld += 1
                }
            }
            return state.pending.isEmpty ? nil : state.pending.removeFirst()
        }
    }

    func close() {
        state.withLock { $0.closed = true }
    }

    /// The reports a record stands for; nil when the reply is withheld.
    static func reports(kind: UInt8, payload: [UInt8], answering command: UInt8) -> [[UInt8]]? {
        let message = Array(payload.prefix(CTAPHID.maxMessageSize))
        switch kind & 0x03 {
        case 0:
            // A known libcbor flaw, not ours: see `allocatesForMissingItems`.
            guard !allocatesForMissingItems(message, answering: command) else { return nil }
            return CTAPHIDPacket.reports(channel: channel, command: CTAPHIDCommand.cbor.rawValue, payload: message)
        case 1: return CTAPHIDPacket.reports(channel: channel, command: CTAPHIDCommand.keepalive.rawValue, payload: Array(message.prefix(1)))
        case 2: return CTAPHIDPacket.reports(channel: channel, command: CTAPHIDCommand.error.rawValue, payload: Array(message.prefix(1)))
        default:
            let reports = stride(from: 0, to: payload.count, by: CTAPHID.reportSize).map { start in
                let report = Array(payload[start..<min(payload.count, start + CTAPHID.reportSize)])
                return report + [UInt8](repeating: 0, count: CTAPHID.reportSize - report.count)
            }
            return allocatesForMissingItems(reassembled(reports), answering: command) ? nil : reports
        }
    }

    /// Whether a reply makes libcbor 0.8 (Debian 12), which libfido2 parses
    /// replies with, allocate for items that are not there: it reserves and
    /// zeroes room for an array's or map's declared count before reading
    /// any item, so a 7-byte getInfo reply `a1 01 9a 10 00 00 00` costs
    /// 2 GiB (Fuzz/known-issues/devicereplies). libfido2 parses the reply,
    /// and the credential key and extensions inside the authenticator data
    /// of makeCredential and getAssertion replies. The fuzzer would find the
    /// flaw again at once and learn nothing more, so such replies are not sent.
    static func allocatesForMissingItems(_ message: [UInt8], answering command: UInt8) -> Bool {
        var authenticatorData: ArraySlice<UInt8>?
        if declaresMissingItems(message.dropFirst(), memberTwo: &authenticatorData) { return true }
        guard [CTAP2Command.makeCredential.rawValue, CTAP2Command.getAssertion.rawValue, CTAP2Command.getNextAssertion.rawValue].contains(command),
            let authenticatorData, let embedded = authenticatorDataCBOR(Array(authenticatorData)) else { return false }
        var ignored: ArraySlice<UInt8>?
        return declaresMissingItems(embedded, memberTwo: &ignored)
    }

    /// Reads CBOR by its heads, as libcbor does before it builds anything,
    /// for an array or map that declares more items than the bytes left
    /// could hold. Notes the byte string under key 2 of an outermost map
    /// (authenticator data, in makeCredential and getAssertion replies).
    private static func declaresMissingItems(_ cbor: ArraySlice<UInt8>, memberTwo: inout ArraySlice<UInt8>?) -> Bool {
        var offset = cbor.startIndex
        // Items still to come in each open container; nil: indefinite length.
        var open: [Int?] = []
        var outermostIsMap = false
        var outermostItems = 0
        var keyIsTwo = false
        while offset < cbor.endIndex {
            let major = cbor[offset] >> 5, info = Int(cbor[offset] & 0x1F)
            let argumentSize = info < 24 ? 0 : info <= 27 ? 1 << (info - 24) : 0
            guard offset + 1 + argumentSize <= cbor.endIndex else { return false }
            let argument = info < 24 ? UInt64(info)
                : cbor[(offset + 1)..<(offset + 1 + argumentSize)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            offset += 1 + argumentSize
            let remaining = UInt64(cbor.endIndex - offset)
            if major == 7 && info == 31 {
                if open.last == .some(nil) { open.removeLast() }
                continue
            }
            let depth = open.count
            if let count = open.last, let count { open[open.count - 1] = count - 1 }
            if depth == 0 && cbor.startIndex + 1 + argumentSize == offset { outermostIsMap = major == 5 }
            var contents: ArraySlice<UInt8>?
            switch major {
            case 2, 3:
                let end = info == 31 ? offset : offset + Int(min(argument, remaining))
                contents = cbor[offset..<end]
                offset = end
            case 4, 5:
                let slots = major == 4 ? argument : argument.multipliedReportingOverflow(by: 2).partialValue
                if info != 31 && (slots > remaining || argument > remaining) { return true }
                if info == 31 || slots > 0 { open.append(info == 31 ? nil : Int(slots)) }
            case 6:
                // The tagged item follows and counts as this one.
                if let count = open.last, let count { open[open.count - 1] = count + 1 }
            default:
                break
            }
            if depth == 1 && outermostIsMap {
                if outermostItems % 2 == 0 {
                    keyIsTwo = major == 0 && argument == 2
                } else if keyIsTwo && major == 2 {
                    memberTwo = contents
                }
                outermostItems += 1
            }
            while let last = open.last, last == 0 { open.removeLast() }
        }
        return false
    }

    /// The CBOR at the end of authenticator data (credential key, extensions), if `data` can be some.
    private static func authenticatorDataCBOR(_ data: [UInt8]) -> ArraySlice<UInt8>? {
        guard data.count > 37 else { return nil }
        var start = 37
        if data[32] & 0x40 != 0 {
            guard data.count >= 55 else { return nil }
            start = 55 + (Int(data[53]) << 8 | Int(data[54]))
        }
        return start < data.count ? data[start...] : nil
    }

    /// The message raw reports carry, put together as a host would.
    private static func reassembled(_ reports: [[UInt8]]) -> [UInt8] {
        guard case .initialization(_, _, let length, let data)? = reports.first.flatMap(CTAPHIDPacket.init) else { return [] }
        var message = Array(data.prefix(length))
        for case .continuation(_, _, let more)? in reports.dropFirst().map(CTAPHIDPacket.init) where message.count < length {
            message += more.prefix(length - message.count)
        }
        return message
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
         UInt8(truncatingIfNeeded: value)]
    }
}

/// What the harness asks of the device: the calls the daemon and authctl
/// make, with every result read through the Swift wrappers.
struct DeviceScript: Sendable {
    /// What a script needs to know about the key it talks to: fixed when
    /// fuzzing, the real values when recording seeds from a virtual key.
    struct Parameters {
        var pin: PIN = PIN(KeySetup.initialPIN)
        var credentialID: [UInt8] = [UInt8](repeating: 0x01, count: 64)
        var rpID = "example.org"
    }

    let name: String
    let run: @Sendable (Device, Parameters) -> Void

    static let all: [DeviceScript] = [
        DeviceScript(name: "info") { device, _ in
            _ = attempt("info") { try device.info() }
        },
        DeviceScript(name: "register") { device, parameters in
            var request = MakeCredentialRequest(
                clientData: .hash(SHA256.hash([1])), relyingParty: RelyingParty(id: parameters.rpID, name: "Example"),
                user: UserEntity(id: [0x75, 0x01], name: "alice", displayName: "Alice"))
            request.excludeList = [parameters.credentialID]
            examine(attempt("makeCredential") { try device.makeCredential(request) })
        },
        DeviceScript(name: "register-pin-extensions") { device, parameters in
            var request = MakeCredentialRequest(
                clientData: .json(Array(#"{"type":"webauthn.create"}"#.utf8)), relyingParty: RelyingParty(id: parameters.rpID),
                user: UserEntity(id: [0x75, 0x02], name: "bob", displayName: "Bob"))
            request.residentKey = .enabled
            request.hmacSecret = true
            request.credentialProtection = .userVerificationOptionalWithCredentialIDList
            request.credentialBlob = [1, 2, 3]
            request.minPINLength = true
            examine(attempt("makeCredential") { try device.makeCredential(request, pin: parameters.pin) })
        },
        DeviceScript(name: "assert") { device, parameters in
            var request = GetAssertionRequest(relyingPartyID: parameters.rpID, clientData: .hash(SHA256.hash([2])))
            request.allowList = [parameters.credentialID]
            examine(attempt("getAssertion") { try device.getAssertion(request) })
        },
        DeviceScript(name: "assert-pin-extensions") { device, parameters in
            var request = GetAssertionRequest(relyingPartyID: parameters.rpID, clientData: .hash(SHA256.hash([3])))
            request.hmacSalt = [UInt8](repeating: 0x5A, count: 64)
            request.credentialBlob = true
            request.userVerification = .enabled
            examine(attempt("getAssertion") { try device.getAssertion(request, pin: parameters.pin) })
        },
        DeviceScript(name: "retries-pin") { device, parameters in
            _ = attempt("pinRetries") { try device.pinRetries() }
            _ = attempt("uvRetries") { try device.uvRetries() }
            attempt("changePIN") { try device.changePIN(from: parameters.pin, to: "5678") }
            attempt("setPIN") { try device.setPIN("5678") }
        },
        DeviceScript(name: "credentials") { device, parameters in
            _ = attempt("credentialMetadata") { try device.credentialMetadata(pin: parameters.pin) }
            _ = attempt("storedRelyingParties") { try device.storedRelyingParties(pin: parameters.pin) }
            let stored = attempt("storedCredentials") {
                try device.storedCredentials(relyingPartyID: parameters.rpID, pin: parameters.pin)
            }
            let id = stored?.first?.credentialID ?? parameters.credentialID
            let user = UserEntity(id: stored?.first?.user.id ?? [1], name: "carol")
            attempt("updateStoredCredentialUser") {
                try device.updateStoredCredentialUser(credentialID: id, user: user, pin: parameters.pin)
            }
            attempt("deleteStoredCredential") { try device.deleteStoredCredential(id: id, pin: parameters.pin) }
        },
        DeviceScript(name: "fingerprints") { device, parameters in
            _ = attempt("bioSensorInfo") { try device.bioSensorInfo() }
            let begun = attempt("beginBioEnrollment") {
                try device.beginBioEnrollment(pin: parameters.pin, sampleTimeout: .seconds(1))
            }
            if let (enrollment, progress) = begun {
                var remaining = progress.remainingSamples
                for _ in 0..<8 where remaining > 0 {
                    let next = attempt("captureNextSample") { try enrollment.captureNextSample(timeout: .seconds(1)) }
                    remaining = next?.remainingSamples ?? 0
                }
                _ = enrollment.templateID
            }
            let templates = attempt("bioTemplates") { try device.bioTemplates(pin: parameters.pin) }
            let id = templates?.first?.id ?? [1, 2, 3, 4]
            attempt("renameBioTemplate") { try device.renameBioTemplate(id: id, name: "thumb", pin: parameters.pin) }
            attempt("removeBioTemplate") { try device.removeBioTemplate(id: id, pin: parameters.pin) }
        },
        DeviceScript(name: "config") { device, parameters in
            attempt("toggleAlwaysUV") { try device.toggleAlwaysUV(pin: parameters.pin) }
            attempt("setMinimumPINLengthRelyingParties") {
                try device.setMinimumPINLengthRelyingParties([parameters.rpID], pin: parameters.pin)
            }
            attempt("setMinimumPINLength") { try device.setMinimumPINLength(6, pin: parameters.pin) }
            attempt("forcePINChange") { try device.forcePINChange(pin: parameters.pin) }
        },
        DeviceScript(name: "reset-touch") { device, _ in
            attempt("touchBegin") { try device.touchBegin() }
            _ = attempt("touchStatus") { try device.touchStatus(timeout: .milliseconds(10)) }
            attempt("cancel") { try device.cancel() }
            attempt("reset") { try device.reset() }
        },
    ]

    /// Runs one call; a failure is traced and ends in nil, as the daemon
    /// turns it into an error reply.
    @discardableResult
    static func attempt<T>(_ call: String, _ body: () throws -> T) -> T? {
        do { return try body() } catch {
            FuzzTrace.log("\(call): \(error)")
            return nil
        }
    }

    /// Reads everything a registration result offers, as the daemon does.
    private static func examine(_ credential: Credential?) {
        guard let credential else { return }
        _ = (credential.format, credential.authenticatorDataCBOR, credential.credentialID, credential.publicKey,
             credential.attestationCertificate, credential.attestationSignature, credential.attestationStatementCBOR,
             credential.aaguid, credential.clientDataHash, credential.flags, credential.signCount, credential.algorithm,
             credential.protection, credential.largeBlobKey, credential.minPINLength, credential.relyingPartyID,
             credential.relyingPartyName, credential.userID, credential.userName, credential.userDisplayName)
        if let parsed = try? ParsedAuthenticatorData(credential.authenticatorData) {
            require(parsed.flags == credential.flags, "authenticator data flags differ from libfido2's")
        }
        _ = try? CBOR.decode(credential.attestationStatementCBOR)
        try? credential.verify()
        try? credential.verifySelf()
    }

    /// Reads every statement of an assertion and checks its signature.
    private static func examine(_ assertion: Assertion?) {
        guard let assertion else { return }
        _ = assertion.clientDataHash
        for (index, statement) in assertion.statements.enumerated() {
            if let parsed = try? ParsedAuthenticatorData(statement.authenticatorData) {
                require(parsed.signCount == statement.signCount, "authenticator data sign count differs from libfido2's")
            }
            try? assertion.verify(at: index, es256PublicKey: fixedPublicKey)
        }
    }

    /// Some valid P-256 point (x‖y), for verifying with.
    private static let fixedPublicKey: [UInt8] = (try? P256.PrivateKey(rawRepresentation: [UInt8](repeating: 0x11, count: 32)))
        .map { $0.publicKey.x + $0.publicKey.y } ?? []
}
