/// authctl's command line: global options, a subcommand, its options and
/// operands. Options may come before or after the subcommand.
struct Arguments {
    var socket: String?
    var json = false
    var help = false
    var version = false
    var subcommand: String?
    var operands: [String] = []
    var options: [String: String] = [:]

    /// Options that take a value, and options that are flags.
    static let valued: Set<String> = ["socket", "timeout"]
    static let flags: Set<String> = ["json", "help", "version"]

    init(_ arguments: [String]) throws(UsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "-h" { help = true; continue }
            guard argument.hasPrefix("--") else {
                if subcommand == nil { subcommand = argument } else { operands.append(argument) }
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if Self.flags.contains(name) {
                guard value == nil else { throw UsageError("--\(name) takes no value") }
                switch name {
                case "json": json = true
                case "help": help = true
                default: version = true
                }
            } else if Self.valued.contains(name) {
                guard let given = value ?? remaining.popFirst() else { throw UsageError("--\(name) needs a value") }
                if name == "socket" { socket = given } else { options[name] = given }
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
