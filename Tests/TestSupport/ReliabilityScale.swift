import Glibc

/// How many rounds the reliability suites run: `full` (the counts in
/// RELIABILITY.md: 1,000 client deaths, 10,000 connect cycles, 200
/// SIGKILLs) unless `AUTHKEYD_RELIABILITY_SCALE=small`, which the
/// sanitizer runs set (scripts/test-sanitizers): a tenth of the rounds,
/// the same assertions. `make reliability` and `make test` run full size.
public enum ReliabilityScale {
    public static let environmentVariable = "AUTHKEYD_RELIABILITY_SCALE"

    public static let isSmall: Bool = getenv(environmentVariable).map { String(cString: $0) == "small" } ?? false

    /// `full` at full size, a tenth of it (at least `minimum`) when small.
    public static func rounds(_ full: Int, minimum: Int = 10) -> Int {
        isSmall ? max(minimum, full / 10) : full
    }
}
