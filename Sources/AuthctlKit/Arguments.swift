import AuthProtocol
import SystemKit

/// authctl's command line: global options, a subcommand, its options and
/// operands. Options may come before or after the subcommand.
struct Arguments {
    var socket: String?
    var json = false
    var help = false
    var version = false
    var subcommand: String?
    var operands: [String] = []
    /// Options given once, by name without the dashes.
    var options: [String: String] = [:]
    /// Options that may be given again and again, in the order given.
    var repeated: [String: [String]] = [:]
    /// Flags given, besides the global ones above.
    var flags: Set<String> = []

    /// Options that take a value, options that take one each time they are
    /// given, and options that are flags. Arrays, not sets: a few dozen
    /// names are searched as fast as hashed, and each `Set<String>` cost
    /// every run of authctl its hashing and runtime metadata at start-up.
    static let valued: [String] = [
        "socket", "timeout", "rp-name", "user", "display-name", "user-id", "challenge", "origin", "uv",
        "attestation", "authenticator", "name", "pin-fd", "format", "algorithm", "pinentry", "appid", "authfile",
    ]
    /// `--rp` names one relying party for most commands, and several for
    /// `config min-pin-length`; `single` refuses a second where one is meant.
    static let repeatable: [String] = ["credential", "transaction", "rp"]
    static let flagNames: [String] = ["json", "help", "version", "resident", "yes", "no", "yes-really", "force-change", "once", "desktop", "no-presence", "verification", "pin-verification", "print"]

    init(_ arguments: [String]) throws(UsageError) {
        var words = CommandLineScanner(arguments)
        while let word = words.next() {
            switch word {
            case .other("-h"): help = true
            case .other(let argument):
                if subcommand == nil { subcommand = argument } else { operands.append(argument) }
            case .option(let name, let value) where Self.flagNames.contains(name):
                guard value == nil else { throw UsageError("--\(name) takes no value") }
                switch name {
                case "json": json = true
                case "help": help = true
                case "version": version = true
                default: flags.insert(name)
                }
            case .option(let name, let value) where Self.valued.contains(name) || Self.repeatable.contains(name):
                guard let given = words.value(value) else { throw UsageError("--\(name) needs a value") }
                if Self.repeatable.contains(name) {
                    repeated[name, default: []].append(given)
                } else if name == "socket" {
                    socket = given
                } else {
                    // A second value would silently win or lose; say so instead.
                    guard options.updateValue(given, forKey: name) == nil else { throw UsageError("--\(name) given twice") }
                }
            case .option(let name, _):
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    /// Every option and flag given, other than the global ones.
    var given: Set<String> {
        Set(options.keys).union(repeated.keys).union(flags)
    }

    /// Refuses options the subcommand does not take, so that a misplaced
    /// `--rp` is an error rather than ignored.
    func check(_ command: String, takes allowed: Set<String>) throws(UsageError) {
        if let stray = given.subtracting(allowed).sorted().first {
            throw UsageError("\(command) does not take --\(stray)")
        }
    }

    /// The value of an option given at most once, if given.
    func single(_ name: String) throws(UsageError) -> String? {
        if let value = options[name] { return value }
        let values = repeated[name] ?? []
        guard values.count <= 1 else { throw UsageError("--\(name) given twice") }
        return values.first
    }

    /// The value of an option the subcommand cannot do without.
    func required(_ name: String) throws(UsageError) -> String {
        guard let value = try single(name), !value.isEmpty else { throw UsageError("--\(name) is required") }
        return value
    }

    /// `--timeout SECONDS` as a duration, if given.
    func timeout() throws(UsageError) -> Duration? {
        guard let text = options["timeout"] else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds < 86_400 else {
            throw UsageError("--timeout takes seconds, such as 30")
        }
        return .milliseconds(Int(seconds * 1000))
    }

    /// A base64url option decoded, if given: at least `minimum` bytes.
    func bytes(_ name: String, minimum: Int = 1) throws(UsageError) -> [UInt8]? {
        guard let text = options[name] else { return nil }
        guard let bytes = Base64URL.decode(text) else { throw UsageError("--\(name) takes base64url") }
        guard bytes.count >= minimum else { throw UsageError("--\(name) takes at least \(minimum) bytes, in base64url") }
        return bytes
    }

    /// `--challenge`: WebAuthn asks for at least 16 random bytes, and authkeyd
    /// refuses fewer; saying so here makes it a usage error, found before connecting.
    func challenge() throws -> [UInt8] {
        try bytes("challenge", minimum: 16) ?? randomBytes(32)
    }

    /// One of a fixed set of words, or `fallback` when not given.
    func choice(_ name: String, of words: [String], default fallback: String) throws(UsageError) -> String {
        guard let value = options[name] else { return fallback }
        guard words.contains(value) else { throw UsageError("--\(name) takes \(words.joined(separator: ", "))") }
        return value
    }

    /// `--NAME` as one of a WebAuthn enumeration's `values`, or `fallback`.
    func choice<Value: WebAuthnEnumeration>(_ name: String, of values: [Value], default fallback: Value) throws(UsageError) -> Value {
        let word = try choice(name, of: values.map(\.rawValue), default: fallback.rawValue)
        return Value(rawValue: word) ?? fallback
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
