import SystemKit

/// The lists and the text entry, drawn by `zenity` (GTK): the key list,
/// the account chooser and the key's name. zenity prints the choice on its
/// standard output and exits 0; Cancel, Escape or closing the window exit
/// 1, and a run that failed exits otherwise: all three are "no answer".
struct Zenity: Sendable {
    let program: String

    /// One row of a list: what zenity prints when it is chosen, and the
    /// cells the user sees.
    struct Row: Sendable {
        var value: String
        var cells: [String]
    }

    /// A single-choice list; the chosen row's value, or the first row's
    /// when OK is pressed with none chosen (the first row is the answer
    /// the daemon itself would give). Double-clicking a row, or Return on
    /// it, chooses it.
    func choose(title: String, text: String, columns: [String], rows: [Row], in dialog: Dialog) -> String? {
        var arguments = [
            "--list", "--title=\(title)", "--text=\(Self.markupEscaped(text))", "--width=560", "--height=340",
            "--column=value", "--hide-column=1", "--print-column=1",
        ]
        arguments += columns.map { "--column=\($0)" }
        for row in rows {
            arguments.append(row.value)
            arguments += (0..<columns.count).map { $0 < row.cells.count ? row.cells[$0] : "" }
        }
        guard let chosen = run(arguments, in: dialog) else { return nil }
        return chosen.isEmpty ? rows.first?.value : chosen
    }

    /// A line of text, `suggestion` filled in.
    func enterText(title: String, text: String, suggestion: String?, in dialog: Dialog) -> String? {
        run(["--entry", "--title=\(title)", "--text=\(Self.markupEscaped(text))", "--entry-text=\(suggestion ?? "")", "--width=420"], in: dialog)
    }

    /// What zenity printed, without its line feed, when it exited 0.
    private func run(_ arguments: [String], in dialog: Dialog) -> String? {
        guard !dialog.isAbandoned else { return nil }
        // NO_AT_BRIDGE: no accessibility bus to complain about where none runs.
        guard let process = try? ChildProcess(
            program, arguments, environment: ["NO_AT_BRIDGE": "1"], standardOutput: .pipe, standardError: .null)
        else { return nil }
        dialog.showing { process.terminate() }
        guard let output = process.outputIfSucceeded(limit: 64 * 1024) else { return nil }
        var text = String(decoding: output, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// zenity's `--text` is Pango markup: a relying party's or a program's
    /// name is shown as written, never as markup.
    static func markupEscaped(_ text: String) -> String {
        text.replacingEach(["&": "&amp;", "<": "&lt;", ">": "&gt;"])
    }
}

extension String {
    /// The text with each character that `table` names replaced by its
    /// entry: escaping for one dialog program or another.
    func replacingEach(_ table: [Character: String]) -> String {
        var replaced = ""
        for character in self {
            if let replacement = table[character] { replaced += replacement } else { replaced.append(character) }
        }
        return replaced
    }
}
