import AuthProtocol
import Glibc
import SystemKit

/// Row 2: `authctl list --json` against `fido2-token -L`, each as a whole
/// command (exec, dynamic linking, runtime start-up, the work, exit),
/// timed by hyperfine.
func commandWallTime(_ settings: Settings) throws -> Row {
    var row = Row(2, "`authctl list --json` vs `fido2-token -L`, wall time of the whole command", target: "≤ 1.5×")
    guard let fido2Token = findInPath("fido2-token") else { throw BenchError("fido2-token is not installed (fido2-tools)") }
    let rounds = settings.pick(full: 6, quick: 1)
    let runs = settings.pick(full: 40, quick: 10)
    let warmup = settings.pick(full: 5, quick: 2)

    let daemon = try DaemonUnderTest(["--virtual-key", "name=K1"])
    defer { daemon.stop() }
    _ = try daemon.waitForKeys(1)
    let authctl = builtProduct("authctl")
    let list = "\(authctl) --socket \(daemon.socketPath) list --json"
    let version = "\(authctl) --version"
    let token = "\(fido2Token) -L"
    let commands = [list, token, version]

    let timed = try HyperfineRounds(commands, rounds: rounds, runs: runs, warmup: warmup, in: daemon.directory, row: 2)
    let times = timed.samples
    let ratios = timed.ratios(list, token)
    let listD = Distribution(times[list] ?? []), tokenD = Distribution(times[token] ?? []), versionD = Distribution(times[version] ?? [])
    let ratio = median(ratios)
    row.measured = "\(fixed(ratio, 2))× (median ratio of \(count(rounds, "hyperfine run")); min \(fixed(ratios.min()!, 2))×, max \(fixed(ratios.max()!, 2))×): "
        + "authctl p50 \(fixed(listD.p50, 2)) ms, fido2-token p50 \(fixed(tokenD.p50, 2)) ms"
    if !settings.quick { row.judge(ratio <= 1.5) }
    row.method = [
        "`hyperfine -N` (no shell) times whole commands: exec, dynamic linking, runtime start-up, the work and the",
        "exit. `authctl --socket S list --json` asks a running `authkeyd` (release build, one virtual key) and",
        "prints its JSON; `fido2-token -L` is libfido2's own tool enumerating keys. On this machine it finds no",
        "hidraw device (a container without USB keys), so it measures libfido2's tool start-up and an empty",
        "enumeration (the manifest through udev/sysfs): the floor a native C tool sets. `authctl --version` (no",
        "daemon, no socket) is timed alongside, to split authctl's own start-up from its request.",
        "\(count(rounds, "hyperfine run")) of \(warmup) warm-up + \(runs) timed executions per command, the commands' order",
        "rotated each run; the ratio is taken per run (median over median, side by side in time) and the median",
        "of those ratios is judged. (`Benchmarks/Row2CommandWallTime.swift`)",
        "",
        "- `authctl list --json`: \(listD.summary(2)); mean \(fixed(listD.mean, 2)) ms",
        "- `fido2-token -L`: \(tokenD.summary(2)); mean \(fixed(tokenD.mean, 2)) ms",
        "- `authctl --version`: \(versionD.summary(2)); mean \(fixed(versionD.mean, 2)) ms",
        "- ratio per run (authctl list / fido2-token, medians): \(ratios.map { fixed($0, 2) + "×" }.joined(separator: ", "))",
        "- minimum over all runs: authctl \(fixed(listD.min, 2)) ms, fido2-token \(fixed(tokenD.min, 2)) ms "
            + "(\(fixed(listD.min / tokenD.min, 2))×)",
    ]
    return row
}

/// The full path of an executable found on `$PATH`.
func findInPath(_ name: String) -> String? {
    let path = currentEnvironment()["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
        return "\(directory)/\(name)"
    }
    return nil
}

extension JSONValue {
    /// A JSON number as a Double, integer or not.
    var number: Double? {
        switch self {
        case .integer(let n): return Double(n)
        case .double(let d): return d
        default: return nil
        }
    }
}
