import Glibc

/// One row of BENCHMARKS.md: its line in the table, and its part of the
/// Method section (how it was measured, and the figures behind the verdict).
struct Row {
    enum Verdict {
        case met
        case missed
        /// Measured, but not judged against the target (`--quick` runs).
        case notJudged
        /// A figure for the record, with no target to judge it by.
        case reported
        case failed
    }

    let number: Int
    let what: String
    let target: String
    var measured = ""
    var verdict = Verdict.notJudged
    /// Markdown paragraphs and bullets, in order.
    var method: [String] = []

    init(_ number: Int, _ what: String, target: String) {
        self.number = number
        self.what = what
        self.target = target
    }

    mutating func judge(_ met: Bool) { verdict = met ? .met : .missed }

    var tableLine: String {
        let word: String
        switch verdict {
        case .met: word = "met"
        case .missed: word = "**missed**"
        case .notJudged: word = "not judged (quick run)"
        case .reported: word = "reported"
        case .failed: word = "**failed**"
        }
        return "| \(number) | \(what) | \(target) | \(measured) | \(word) |"
    }

    var methodSection: String {
        (["### Row \(number): \(what)", ""] + method).joined(separator: "\n")
    }
}

/// How much to measure: `make bench`'s full rounds, or `--quick`'s few
/// (a smoke test that every row runs; its figures are not judged).
struct Settings {
    let quick: Bool

    func pick<T>(full: T, quick: T) -> T { self.quick ? quick : full }
}

/// Progress on standard error, so that standard output stays the report.
func progress(_ text: String) {
    var line = "authkeyd-bench: \(text)\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
