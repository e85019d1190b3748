// authkeyd-bench: measures what BENCHMARKS.md reports (scripts/bench, `make bench`).
//
//     authkeyd-bench [--quick] [ROW...]
//
// Prints each row's table line, a `<!-- method -->` line, then each row's
// Method section. Rows 1–6 and 11 start the release `authkeyd` (and
// `authctl`) built beside this binary. Exits 1 if any row could not be
// measured.
import Glibc

let arguments = CommandLine.arguments.dropFirst()
let settings = Settings(quick: arguments.contains("--quick"))
let requested = arguments.compactMap { Int($0) }
let rows: [(number: Int, what: String, measure: (Settings) async throws -> [Row])] = [
    (1, "added latency through the daemon", { [try await addedLatency($0)] }),
    (2, "authctl list vs fido2-token -L", { [try commandWallTime($0)] }),
    (3, "1,000 concurrent clients", { [try concurrentClients($0)] }),
    (4, "attach event to 1,000 watchers", { [try watcherFanOut($0)] }),
    (5, "idle daemon", { [try idleCost($0)] }),
    (6, "start to READY=1", { [try startToReady($0)] }),
    (7, "assertions per second in process", { [try assertionThroughput($0)] }),
    (8, "first request after an idle exit", { [try firstRequestAfterIdleExit($0)] }),
    (9, "the provider and the PAM module", { try providerAndPAM($0) }),
    (11, "a request on a closed key", { [try closedKey($0)] }),
]
signal(SIGPIPE, SIG_IGN)

var results: [Row] = []
var failed = false
for (number, what, measure) in rows where requested.isEmpty || requested.contains(number) {
    progress("row \(number): \(what)")
    do {
        results += try await measure(settings)
    } catch {
        failed = true
        var row = Row(number, what, target: "")
        row.verdict = .failed
        row.measured = "not measured: " + (String(describing: error).split(separator: "\n").first.map(String.init) ?? "")
        row.method = ["Not measured:", "", "```", "\(error)", "```"]
        results.append(row)
    }
}
results.forEach { print($0.tableLine) }
print("<!-- method -->")
results.forEach { print($0.methodSection + "\n") }
exit(failed ? 1 : 0)
