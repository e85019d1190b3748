import Glibc

// Summaries of repeated measurements: these machines are shared and noisy,
// so every figure is a median or a percentile, never a single time.

/// Percentile of sorted samples, by nearest rank.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = max(0, min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
    return sorted[rank]
}

func median(_ values: [Double]) -> Double { percentile(values.sorted(), 50) }

/// Samples, sorted once, with the figures the report quotes.
struct Distribution {
    let sorted: [Double]

    init(_ samples: [Double]) { sorted = samples.sorted() }

    var count: Int { sorted.count }
    var min: Double { sorted.first ?? .nan }
    var max: Double { sorted.last ?? .nan }
    var mean: Double { sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count) }
    func p(_ p: Double) -> Double { percentile(sorted, p) }
    var p50: Double { p(50) }
    var p90: Double { p(90) }
    var p99: Double { p(99) }

    /// "p50 0.321 ms, p90 …, p99 …, max … (n = 2,000)"
    func summary(_ digits: Int = 3, unit: String = "ms") -> String {
        "p50 \(fixed(p50, digits)) \(unit), p90 \(fixed(p90, digits)) \(unit), p99 \(fixed(p99, digits)) \(unit), "
            + "max \(fixed(max, digits)) \(unit) (n = \(grouped(count)))"
    }
}

/// A number with a fixed count of decimals, without Foundation.
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
    if digits > 0 {
        let digitsText = String(fraction)
        text += "." + String(repeating: "0", count: digits - digitsText.count) + digitsText
    }
    return text
}

/// "1 round", "7 rounds".
func count(_ n: Int, _ noun: String) -> String { "\(grouped(n)) \(noun)\(n == 1 ? "" : "s")" }

/// An integer with thousands separators: 2,866.
func grouped(_ value: Int) -> String {
    let digits = String(abs(value))
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
        result.append(digit)
    }
    return (value < 0 ? "-" : "") + result
}

// MARK: - Time

/// CLOCK_MONOTONIC in nanoseconds: cheap enough to stamp every message.
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Milliseconds between two `now()` readings.
func milliseconds(_ start: UInt64, _ end: UInt64) -> Double {
    end >= start ? Double(end - start) / 1e6 : -Double(start - end) / 1e6
}

/// Sleeps the calling thread.
func pause(milliseconds: Int) {
    var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
    var left = timespec()
    while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
}

/// CPU time this process has used so far (every thread), in nanoseconds.
func ownCPUTime() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
