/// One word of a command line, as authkeyd, authctl and authkeyd-virtkey
/// read them: an option (`--name` or `--name=value`), or anything else
/// (a subcommand, an operand, `-h`).
public enum CommandLineWord: Equatable, Sendable {
    /// The name without its dashes, and the value given after `=`, if any.
    case option(String, value: String?)
    case other(String)
}

/// Reads a command line word by word; the program decides what each option
/// means and which take a value, so that the three programs split
/// `--name=value` and take a following value the same way, with their own
/// flags and messages.
public struct CommandLineScanner {
    private var remaining: ArraySlice<String>

    public init(_ arguments: [String]) {
        remaining = arguments[...]
    }

    /// The next word, or nil at the end.
    public mutating func next() -> CommandLineWord? {
        guard let argument = remaining.popFirst() else { return nil }
        guard argument.hasPrefix("--") else { return .other(argument) }
        let name = argument.dropFirst(2)
        guard let equals = name.firstIndex(of: "=") else { return .option(String(name), value: nil) }
        return .option(String(name[..<equals]), value: String(name[name.index(after: equals)...]))
    }

    /// The word after the current one, left to be read.
    public var upcoming: String? { remaining.first }

    /// The value of an option that needs one: given after `=`, else the next
    /// word, whatever it is; nil at the end of the line.
    public mutating func value(_ given: String?) -> String? {
        given ?? remaining.popFirst()
    }

    /// The value of an option that may go without: given after `=`, else the
    /// next word unless it is an option itself.
    public mutating func optionalValue(_ given: String?) -> String? {
        if let given { return given }
        guard let next = remaining.first, !next.hasPrefix("--") else { return nil }
        return remaining.popFirst()
    }
}
