import AuthProtocol
import Glibc
import SystemKit

/// Whole commands timed side by side with hyperfine, in rounds whose
/// command order turns, so that no command always runs first: every
/// sample per command (ms), and each round's median per command.
struct HyperfineRounds {
    var samples: [String: [Double]] = [:]
    var roundMedians: [[String: Double]] = []

    /// `shell`: the commands need one (an environment variable, a
    /// redirection); without it hyperfine runs them directly (`-N`).
    init(_ commands: [String], rounds: Int, runs: Int, warmup: Int, shell: Bool = false, in directory: ScratchDirectory, row: Int) throws {
        guard let hyperfine = findInPath("hyperfine") else {
            throw BenchError("hyperfine is not installed (scripts/install-deps hyperfine)")
        }
        for round in 1...rounds {
            progress("row \(row): hyperfine round \(round) of \(rounds)")
            let order = (0..<commands.count).map { commands[($0 + round) % commands.count] }
            let export = directory.file("hyperfine-\(row)-\(round).json")
            let arguments = (shell ? [] : ["-N"]) + ["--style", "none", "--warmup", "\(warmup)", "--runs", "\(runs)", "--export-json", export] + order
            let log = directory.file("hyperfine-\(row).log")
            let pid = try spawn(hyperfine, arguments, environment: childEnvironment(), outputPath: log)
            let status = reap(pid, timeoutMilliseconds: 600_000)
            guard status == 0, let bytes = try AtomicFile.read(export) else {
                let text = (try? AtomicFile.read(log)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                throw BenchError("hyperfine failed (status \(status)):\n\(text)")
            }
            var medians: [String: Double] = [:]
            for result in try JSONParser().parse(bytes)["results"]?.arrayValue ?? [] {
                guard let command = result["command"]?.stringValue, let times = result["times"]?.arrayValue?.compactMap(\.number) else { continue }
                samples[command, default: []] += times.map { $0 * 1000 }
                medians[command] = median(times) * 1000
            }
            guard commands.allSatisfy({ medians[$0] != nil }) else { throw BenchError("hyperfine's results lack a command") }
            roundMedians.append(medians)
        }
    }

    /// Per round, `a`'s median over `b`'s.
    func ratios(_ a: String, _ b: String) -> [Double] { roundMedians.map { $0[a]! / $0[b]! } }
    /// Per round, `a`'s median minus `b`'s, ms.
    func differences(_ a: String, _ b: String) -> [Double] { roundMedians.map { $0[a]! - $0[b]! } }
}
