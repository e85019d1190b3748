/// Credential ids run to a hundred characters. Tables show their start
/// (`shortened`), and commands that take an id take such a start as well.
enum IDPrefix {
    /// The shortest start of an id that names it, so that a slip of the
    /// keyboard cannot pick a credential to delete.
    static let shortest = 8

    static func shortened(_ id: String) -> String {
        id.count <= 20 ? id : String(id.prefix(16)) + "…"
    }

    /// The ids that `given` names: itself when it is a whole id, else the
    /// ones it starts (`shortest` characters at least; the "…" a table
    /// shows may be left on). Empty when it names none.
    static func matches(_ given: String, in ids: [String]) -> [String] {
        let prefix = given.hasSuffix("…") ? String(given.dropLast()) : given
        if ids.contains(prefix) { return [prefix] }
        guard prefix.count >= shortest else { return [] }
        return ids.filter { $0.hasPrefix(prefix) }
    }
}
