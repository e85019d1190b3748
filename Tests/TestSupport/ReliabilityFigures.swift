import AuthProtocol
import Glibc

/// The figures a reliability test measured (cycles run, times to recover,
/// latencies, descriptor and thread counts, memory), one JSON line per
/// test, appended to the file `AUTHKEYD_RELIABILITY_FIGURES` names;
/// `scripts/reliability` builds RELIABILITY.md from them. Nothing is
/// written when the variable is unset.
///
///     {"test":"clientDeath.leaks","figures":{"cycles":1000,"fdBefore":12,…}}
public enum ReliabilityFigures {
    public static let environmentVariable = "AUTHKEYD_RELIABILITY_FIGURES"

    /// Appends one line; the figures keep the order they are given in.
    public static func record(test: String, figures: JSONObject) {
        guard let path = getenv(environmentVariable).map({ String(cString: $0) }), !path.isEmpty else { return }
        let text = JSONValue.object(["test": .string(test), "figures": .object(figures)]).jsonText + "\n"
        // One write with O_APPEND: lines from several processes never interleave.
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// A duration in milliseconds, to a tenth.
    public static func milliseconds(_ duration: Duration) -> JSONValue {
        let (seconds, attoseconds) = duration.components
        let ms = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return .double((ms * 10).rounded() / 10)
    }

    /// A duration in seconds, to a tenth.
    public static func seconds(_ duration: Duration) -> JSONValue {
        let (seconds, attoseconds) = duration.components
        return .double(((Double(seconds) + Double(attoseconds) / 1e18) * 10).rounded() / 10)
    }

    /// A count or size as a JSON integer.
    public static func count(_ value: some BinaryInteger) -> JSONValue { .integer(Int64(value)) }
}

/// Percentiles of a set of durations (nearest rank).
public struct LatencySummary: Sendable {
    public let sorted: [Duration]

    public init(_ samples: [Duration]) { sorted = samples.sorted() }

    public func percentile(_ p: Double) -> Duration {
        guard !sorted.isEmpty else { return .zero }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    public var median: Duration { percentile(50) }
    public var p99: Duration { percentile(99) }
    public var maximum: Duration { sorted.last ?? .zero }
}
