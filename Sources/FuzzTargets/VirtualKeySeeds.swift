import CBOR
import Crypto
import VirtualKey

/// Starting inputs for `fuzzVirtualKey`: CTAPHID conversations, good and
/// bad, and CTAP2 sessions that walk every command and subcommand, most
/// of them authenticated, so that the fuzzer starts past the key's checks.
enum VirtualKeySeeds {
    static func all() -> [(name: String, input: [UInt8])] {
        reportSeeds() + commandSeeds()
    }

    // MARK: Raw reports (mode 0)

    private static let firstChannel: UInt32 = 2
    private static let nonce: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]

    private struct Reports {
        var bytes: [UInt8]

        init(setup: UInt8, mode: UInt8 = 0) { bytes = [mode, setup] }

        mutating func add(_ report: [UInt8], control: UInt8 = 0) {
            bytes += [control] + report + [UInt8](repeating: 0, count: CTAPHID.reportSize - report.count)
        }

        /// A whole message, split as CTAPHID does.
        mutating func message(_ channel: UInt32, _ command: CTAPHIDCommand, _ payload: [UInt8]) {
            for report in CTAPHIDPacket.reports(channel: channel, command: command.rawValue, payload: payload) { add(report) }
        }

        mutating func initialize(_ channel: UInt32 = CTAPHID.broadcastChannel) {
            message(channel, .initialize, VirtualKeySeeds.nonce)
        }
    }

    private static func header(_ channel: UInt32, _ byte4: UInt8, _ rest: [UInt8] = []) -> [UInt8] {
        ScriptedDevice.bigEndian(channel) + [byte4] + rest
    }

    private static func reportSeeds() -> [(name: String, input: [UInt8])] {
        let channel = firstChannel
        var basics = Reports(setup: 0)
        basics.initialize()
        basics.message(channel, .ping, Array(0..<150))
        basics.message(channel, .wink, [])
        basics.message(channel, .cbor, [CTAP2Command.getInfo.rawValue])
        basics.message(channel, .cbor, [CTAP2Command.selection.rawValue])
        basics.message(channel, .lock, [1])
        basics.message(channel, .msg, [0, 1, 0, 0])
        basics.initialize(channel)

        var register = Reports(setup: 0x00)
        register.initialize()
        register.message(channel, .cbor, [CTAP2Command.makeCredential.rawValue] + CBOR.map(makeCredential(rk: true)).encoded())
        register.message(channel, .cbor, [CTAP2Command.getAssertion.rawValue] + CBOR.map(getAssertion()).encoded())
        register.message(channel, .cbor, [CTAP2Command.getNextAssertion.rawValue])

        // Malformed traffic from two hosts.
        var errors = Reports(setup: 0)
        errors.add(header(channel, 0x00))  // continuation, no message
        errors.add(header(channel, 0x90, [0, 1, 4]))  // CBOR on an unallocated channel
        errors.initialize()
        errors.add(header(0, 0x81, [0, 1]))  // channel 0
        errors.add(header(channel, 0x90, [0, 0]))  // empty CBOR
        errors.add(header(channel, 0x81, [0xFF, 0xFF]))  // too long
        errors.add(header(channel, 0x86, [0, 9] + nonce + [0]))  // INIT of the wrong length
        errors.add(header(channel, 0x81, [0, 100] + [UInt8](repeating: 7, count: 57)))
        errors.add(header(channel, 0x01, [1]))  // sequence 1, not 0
        errors.add(header(channel, 0x81, [0, 100] + [UInt8](repeating: 7, count: 57)))
        errors.add(header(channel, 0x81, [0, 1, 1]), control: 0x01)  // second host: busy
        errors.add(header(channel, 0x91, []))  // CANCEL
        errors.add(header(channel, 0x00, [UInt8](repeating: 8, count: 59)))
        errors.add(header(channel, 0x81, [0, 100] + [UInt8](repeating: 7, count: 57)), control: 0x02)
        errors.add(header(channel, 0x86, [0, 8] + nonce))  // INIT resynchronises
        errors.add(header(channel, 0x90, [0, 1, 4]), control: 0x04)  // after a power cycle

        // A U2F-only key (mode 2): VERSION, REGISTER, AUTHENTICATE in each
        // control, in both APDU encodings, and the CBOR it refuses.
        var u2f = Reports(setup: 0, mode: 2)
        u2f.initialize()
        let challengeAndApplication = [UInt8](repeating: 0x11, count: 32) + SHA256.hash(Array("example.org".utf8))
        u2f.message(channel, .msg, [0, 3, 0, 0, 0, 0, 0])
        u2f.message(channel, .msg, [0, 3, 0, 0])
        u2f.message(channel, .msg, [0, 1, 3, 0, 0, 0, 64] + challengeAndApplication + [0, 0])
        u2f.message(channel, .msg, [0, 1, 0, 0, 64] + challengeAndApplication)
        for control: UInt8 in [0x07, 0x03, 0x08] {
            let handle = [UInt8](repeating: 0x22, count: 64)
            u2f.message(channel, .msg, [0, 2, control, 0, 0, 0, 129] + challengeAndApplication + [64] + handle + [0, 0])
        }
        u2f.message(channel, .msg, [0x80, 4, 0, 0])
        u2f.message(channel, .cbor, [CTAP2Command.getInfo.rawValue])

        return [
            ("seed-hid-basics", basics.bytes), ("seed-hid-register", register.bytes), ("seed-hid-errors", errors.bytes),
            ("seed-hid-u2f", u2f.bytes),
        ]
    }

    // MARK: CTAP2 requests (mode 1)

    static let rpID = "example.org"

    private static func makeCredential(rk: Bool, user: UInt8 = 1, extensions: CBORMap = [:]) -> CBORMap {
        var request: CBORMap = [
            1: .bytes(SHA256.hash([user])),
            2: .map(["id": .text(rpID), "name": "Example"]),
            3: .map(["id": .bytes([0x75, user]), "name": "alice", "displayName": "Alice"]),
            4: [.map(["alg": -7, "type": "public-key"]), .map(["alg": -257, "type": "public-key"])],
            7: .map(["rk": .bool(rk)]),
        ]
        if !extensions.isEmpty { request[6] = .map(extensions) }
        return request
    }

    private static func getAssertion(extensions: CBORMap = [:], allow: [UInt8]? = nil) -> CBORMap {
        var request: CBORMap = [1: .text(rpID), 2: .bytes(SHA256.hash([9])), 5: .map(["up": true])]
        if let allow { request[3] = [.map(["type": "public-key", "id": .bytes(allow)])] }
        if !extensions.isEmpty { request[4] = .map(extensions) }
        return request
    }

    private struct Session {
        var writer: FuzzInputWriter

        init(setup: UInt8) { writer = FuzzInputWriter(header: [1, setup]) }

        mutating func raw(_ command: UInt8, _ parameters: CBORMap? = nil) {
            writer.record(0, [command] + (parameters.map { CBOR.map($0).encoded() } ?? []))
        }

        mutating func signed(_ command: UInt8, _ parameters: CBORMap) {
            writer.record(1, [command] + CBOR.map(parameters).encoded())
        }

        mutating func token(_ permissions: UInt8, rpID: String? = nil, kind: UInt8 = 2) {
            writer.record(kind, [permissions] + Array((rpID ?? "").utf8))
        }

        mutating func event(_ choice: UInt8) { writer.record(5, [choice]) }
    }

    private static let credential: CBOR = .map(["type": "public-key", "id": .bytes(CommandSession.credentialPlaceholder + [0])])
    private static let template: CBOR = .bytes(CommandSession.templatePlaceholder + [0])

    private static func commandSeeds() -> [(name: String, input: [UInt8])] {
        let allExtensions: CBORMap = ["credProtect": 2, "hmac-secret": true, "credBlob": .bytes([1, 2, 3]), "minPinLength": true]

        var plain = Session(setup: 0x00)
        plain.raw(CTAP2Command.getInfo.rawValue)
        plain.raw(CTAP2Command.makeCredential.rawValue, makeCredential(rk: true, extensions: ["credProtect": 1, "credBlob": .bytes([1])]))
        plain.raw(CTAP2Command.makeCredential.rawValue, makeCredential(rk: true, user: 2))
        plain.raw(CTAP2Command.getAssertion.rawValue, getAssertion(extensions: ["credBlob": true]))
        plain.raw(CTAP2Command.getNextAssertion.rawValue)
        plain.raw(CTAP2Command.getAssertion.rawValue, getAssertion(allow: CommandSession.credentialPlaceholder + [1]))
        plain.raw(CTAP2Command.clientPIN.rawValue, [1: 1, 2: 1])
        plain.raw(CTAP2Command.clientPIN.rawValue, [1: 1, 2: 2])

        var pin = Session(setup: 0x01)
        pin.raw(CTAP2Command.clientPIN.rawValue, [1: 2, 2: 1])
        pin.token(0x03, rpID: rpID)
        pin.signed(CTAP2Command.makeCredential.rawValue, makeCredential(rk: true, extensions: allExtensions))
        pin.token(0x03, rpID: rpID)
        pin.signed(CTAP2Command.getAssertion.rawValue, getAssertion(extensions: ["hmac-secret": .bytes([UInt8](repeating: 0x5A, count: 64)), "credBlob": true]))
        pin.event(5)
        pin.token(0x00, kind: 0x12)
        pin.signed(CTAP2Command.makeCredential.rawValue, makeCredential(rk: false))
        pin.raw(CTAP2Command.clientPIN.rawValue, [1: 1, 2: 7])

        var setPIN = Session(setup: 0x00)
        setPIN.writer.record(3, Array("1234".utf8))
        setPIN.writer.record(4, Array("87654321".utf8))
        setPIN.token(0x01, rpID: rpID)
        setPIN.event(0)
        setPIN.writer.record(4, Array("ab".utf8))

        var credentials = Session(setup: 0x01)
        credentials.signed(CTAP2Command.makeCredential.rawValue, makeCredential(rk: true, user: 1))
        credentials.token(0x01, rpID: rpID)
        credentials.signed(CTAP2Command.makeCredential.rawValue, makeCredential(rk: true, user: 2))
        credentials.token(0x04)
        credentials.signed(CTAP2Command.credentialManagement.rawValue, [1: 1])
        credentials.signed(CTAP2Command.credentialManagement.rawValue, [1: 2])
        credentials.raw(CTAP2Command.credentialManagement.rawValue, [1: 3])
        credentials.signed(CTAP2Command.credentialManagement.rawValue, [1: 4, 2: .map([1: .bytes(SHA256.hash(Array(rpID.utf8)))])])
        credentials.raw(CTAP2Command.credentialManagement.rawValue, [1: 5])
        credentials.signed(CTAP2Command.credentialManagement.rawValue, [1: 7, 2: .map([2: credential, 3: .map(["id": .bytes([0x75, 1]), "name": "carol"])])])
        credentials.signed(CTAP2Command.credentialManagementPreview.rawValue, [1: 6, 2: .map([2: credential])])

        var fingerprints = Session(setup: 0x01)
        fingerprints.raw(CTAP2Command.bioEnrollment.rawValue, [1: 1, 2: 7])
        fingerprints.raw(CTAP2Command.bioEnrollment.rawValue, [6: true])
        fingerprints.token(0x08)
        fingerprints.signed(CTAP2Command.bioEnrollment.rawValue, [1: 1, 2: 1, 3: .map([3: 1000])])
        for _ in 0..<3 { fingerprints.signed(CTAP2Command.bioEnrollment.rawValue, [1: 1, 2: 2, 3: .map([1: template])]) }
        fingerprints.signed(CTAP2Command.bioEnrollment.rawValue, [1: 1, 2: 4])
        fingerprints.signed(CTAP2Command.bioEnrollmentPreview.rawValue, [1: 1, 2: 5, 3: .map([1: template, 2: "thumb"])])
        fingerprints.token(0x03, rpID: rpID, kind: 0x0A)
        fingerprints.raw(CTAP2Command.makeCredential.rawValue, makeCredential(rk: true).merging([7: .map(["uv": true])]))
        fingerprints.token(0x08)
        fingerprints.signed(CTAP2Command.bioEnrollment.rawValue, [1: 1, 2: 6, 3: .map([1: template])])
        fingerprints.raw(CTAP2Command.bioEnrollment.rawValue, [1: 1, 2: 3])

        var config = Session(setup: 0x01)
        config.token(0x20)
        config.signed(CTAP2Command.config.rawValue, [1: 2])
        config.signed(CTAP2Command.config.rawValue, [1: 3, 2: .map([1: 6, 2: [.text(rpID)], 3: true])])
        config.raw(CTAP2Command.config.rawValue, [1: 1])
        config.raw(CTAP2Command.makeCredential.rawValue, makeCredential(rk: false, extensions: ["minPinLength": true]))

        var unprotected = Session(setup: 0x02)
        unprotected.raw(CTAP2Command.config.rawValue, [1: 3, 2: .map([1: 8])])
        unprotected.raw(CTAP2Command.config.rawValue, [1: 2])
        unprotected.raw(CTAP2Command.makeCredential.rawValue, makeCredential(rk: false))

        var lifecycle = Session(setup: 0x48)
        lifecycle.raw(CTAP2Command.selection.rawValue)
        lifecycle.event(1)
        lifecycle.raw(CTAP2Command.reset.rawValue)
        lifecycle.event(0)
        lifecycle.raw(CTAP2Command.reset.rawValue)
        lifecycle.writer.record(6, [CTAPHIDCommand.ping.rawValue, 1, 2, 3])
        lifecycle.writer.record(6, [CTAPHIDCommand.wink.rawValue])
        lifecycle.writer.record(6, [CTAPHIDCommand.initialize.rawValue] + nonce)
        lifecycle.event(7)
        lifecycle.writer.record(7, [CTAPHIDCommand.cbor.rawValue, CTAP2Command.getInfo.rawValue])

        return [
            ("seed-ctap2-plain", plain.writer.bytes), ("seed-ctap2-pin", pin.writer.bytes),
            ("seed-ctap2-setpin", setPIN.writer.bytes), ("seed-ctap2-credentials", credentials.writer.bytes),
            ("seed-ctap2-fingerprints", fingerprints.writer.bytes), ("seed-ctap2-config", config.writer.bytes),
            ("seed-ctap2-unprotected", unprotected.writer.bytes), ("seed-ctap2-lifecycle", lifecycle.writer.bytes),
        ]
    }
}

extension CBORMap {
    fileprivate func merging(_ other: CBORMap) -> CBORMap {
        var merged = self
        for (key, value) in other.entries { merged[key] = value }
        return merged
    }
}
