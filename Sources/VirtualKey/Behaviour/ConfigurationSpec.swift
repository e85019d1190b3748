/// The one-line form of a virtual key's configuration, shared by
/// `authkeyd --virtual-key=SPEC` and `authkeyd-virtkey`:
///
///     name=Work Key,pin=123456,presence=after:300ms,uv=nomatch,capacity=10
///
/// Settings are separated by commas; each is `setting=value`. An empty spec
/// is the default key.
extension VirtualKeyConfiguration {
    /// The settings a spec may hold, with what each takes.
    public static let specSettings: [(name: String, value: String, meaning: String)] = [
        ("name", "TEXT", "product name the key reports"),
        ("manufacturer", "TEXT", "manufacturer name"),
        ("aaguid", "32 HEX DIGITS", "the key model's AAGUID"),
        ("ctap", "fido2|u2f", "the protocol the key speaks: CTAP 2.1 (default), or U2F (CTAP1) only, as keys made before FIDO2"),
        ("pin", "PIN", "a PIN to set when the key is created"),
        ("pin-retries", "N", "the PIN attempts left when the key is created with pin= (1 to 8, default 8)"),
        ("presence", "immediate|after:DURATION|never|denied|manual", "how the simulated user answers a touch request"),
        ("presence-timeout", "DURATION", "how long the key waits for a touch (default 30s)"),
        ("uv", "match|nomatch", "whether fingerprints match"),
        ("fingerprint", "yes|no", "whether the key has a fingerprint sensor (default yes)"),
        ("capacity", "N", "discoverable credentials the key can hold (default 25)"),
        ("largeblobs", "N|off", "maxSerializedLargeBlobArray in bytes, 1024 to 65536 (default 1024); off: no large blobs"),
        ("attestation", "packed|self|none", "the attestation of new credentials (default packed)"),
        ("algorithms", "ALG[+ALG]", "the signature algorithms the key offers, es256 and eddsa, joined by + (default es256+eddsa)"),
        ("reset-window", "DURATION", "how long after plug-in a reset is allowed (default 10s)"),
        ("state", "FILE", "keep the key's credentials in FILE across restarts"),
        ("fault", "stall|garbage|wrong-channel|drop|vanish|delay:DURATION|busy",
         "misbehave in a CTAP2 reply: send only its first report, garble it, answer on another channel, lose a report, disappear as if unplugged, or answer late; or refuse the request with ERR_CHANNEL_BUSY, as a key busy with another host's transaction does"),
        ("fault-after", "N", "CTAP2 replies to send correctly before the fault (default 0; opening a key takes one getInfo, authkeyd's bring-up four)"),
        ("fault-count", "N|always", "how many replies the fault hits (default 1)"),
    ]

    /// Parses a spec; the error says which setting is wrong and why.
    public init(spec: String) throws(VirtualKeyError) {
        self.init()
        for entry in spec.split(separator: ",", omittingEmptySubsequences: true) {
            guard let equals = entry.firstIndex(of: "=") else {
                throw .configuration("'\(entry)' is not setting=value")
            }
            let name = entry[..<equals].trimmingSpaces()
            let value = entry[entry.index(after: equals)...].trimmingSpaces()
            try apply(setting: name, value: value)
        }
    }

    /// Sets one setting by name, as a spec or a command-line flag gives it.
    public mutating func apply(setting name: String, value: String) throws(VirtualKeyError) {
        func invalid(_ expected: String) -> VirtualKeyError {
            .configuration("\(name)=\(name == "pin" ? "<redacted>" : value): expected \(expected)")
        }
        switch name {
        case "name", "product": productName = value
        case "manufacturer": manufacturer = value
        case "aaguid":
            guard let bytes = Self.hexBytes(value), bytes.count == 16 else { throw invalid("32 hex digits") }
            aaguid = bytes
        case "ctap":
            guard let personality = CTAPPersonality(rawValue: value) else { throw invalid("fido2 or u2f") }
            ctap = personality
        case "pin": initialPIN = value
        case "pin-retries":
            guard let count = Int(value), (1...8).contains(count) else { throw invalid("a number from 1 to 8") }
            initialPINRetries = count
        case "presence":
            switch value {
            case "immediate": presence = .immediate
            case "never": presence = .never
            case "denied": presence = .denied
            case "manual": presence = .manual
            default:
                guard value.hasPrefix("after:"), let delay = Self.duration(String(value.dropFirst(6))) else {
                    throw invalid("immediate, after:DURATION, never, denied or manual")
                }
                presence = .after(delay)
            }
        case "presence-timeout":
            guard let timeout = Self.duration(value) else { throw invalid("a duration such as 30s or 500ms") }
            presenceTimeout = timeout
        case "uv":
            switch value {
            case "match": userVerification = .match
            case "nomatch", "no-match": userVerification = .noMatch
            default: throw invalid("match or nomatch")
            }
        case "fingerprint":
            guard let flag = Self.flag(value) else { throw invalid("yes or no") }
            fingerprintSensor = flag
        case "capacity":
            guard let count = Int(value), count >= 0, count <= 10_000 else { throw invalid("a number from 0 to 10000") }
            residentCredentialCapacity = count
        case "largeblobs":
            if Self.flag(value) == false {
                largeBlobArrayLimit = 0
            } else {
                guard let size = Int(value), (1024...65536).contains(size) else { throw invalid("a size from 1024 to 65536, or off") }
                largeBlobArrayLimit = size
            }
        case "attestation":
            guard let mode = AttestationMode(rawValue: value) else { throw invalid("packed, self or none") }
            attestation = mode
        case "algorithms":
            guard let algorithms = Self.algorithms(value) else { throw invalid("es256, eddsa, or both joined by +") }
            self.algorithms = algorithms
        case "reset-window":
            guard let window = Self.duration(value) else { throw invalid("a duration such as 10s") }
            resetWindow = window
        case "state": stateFile = value
        case "fault":
            guard let parsed = Self.fault(value) else { throw invalid("stall, garbage, wrong-channel, drop, vanish, delay:DURATION or busy") }
            fault = parsed
        case "fault-after":
            guard let count = Int(value), count >= 0 else { throw invalid("a number of replies, 0 or more") }
            faultAfter = count
        case "fault-count":
            if value == "always" {
                faultCount = nil
            } else {
                guard let count = Int(value), count >= 1 else { throw invalid("a number of replies, 1 or more, or always") }
                faultCount = count
            }
        default:
            let known = Self.specSettings.map(\.name).joined(separator: ", ")
            throw .configuration("unknown setting '\(name)' (known: \(known))")
        }
    }

    /// A `fault=` value: the fault it names.
    static func fault(_ text: String) -> Fault? {
        switch text {
        case "stall": return .stallMidMessage
        case "garbage": return .corruptReport(index: 0)
        case "wrong-channel": return .wrongChannel
        case "drop": return .dropReport(index: 0)
        case "vanish": return .vanish
        case "busy": return .channelBusy
        default:
            guard text.hasPrefix("delay:"), let delay = duration(String(text.dropFirst(6))) else { return nil }
            return .delay(delay)
        }
    }

    /// `es256+eddsa`: the algorithms named, in order, at least one, each
    /// once. A flag's value (`--algorithms es256,eddsa`) may use commas.
    static func algorithms(_ text: String) -> [CredentialAlgorithm]? {
        let names = text.split(whereSeparator: { $0 == "+" || $0 == "," }).map { $0.trimmingSpaces() }
        let algorithms = names.compactMap(CredentialAlgorithm.init(specName:))
        guard !algorithms.isEmpty, algorithms.count == names.count, Set(algorithms).count == algorithms.count else { return nil }
        return algorithms
    }

    /// `500ms`, `2s`, `1.5s`, or a bare number of milliseconds.
    static func duration(_ text: String) -> Duration? {
        if text.hasSuffix("ms"), let ms = Int(text.dropLast(2)), ms >= 0 { return .milliseconds(ms) }
        if text.hasSuffix("s"), let seconds = Double(text.dropLast(1)), seconds >= 0 {
            return .milliseconds(Int(seconds * 1000))
        }
        if let ms = Int(text), ms >= 0 { return .milliseconds(ms) }
        return nil
    }

    static func flag(_ text: String) -> Bool? {
        switch text {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: return nil
        }
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.filter { $0 != "-" }.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
