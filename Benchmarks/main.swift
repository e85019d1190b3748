// authkeyd-bench: measures what BENCHMARKS.md reports. Run through `make bench`.
import FIDO2
import Foundation
import VirtualKey

/// Percentile of sorted samples (nearest rank).
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = max(0, min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
    return sorted[rank]
}

func median(_ values: [Double]) -> Double { percentile(values.sorted(), 50) }

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// Row 7: getAssertion through libfido2 on the in-process virtual key.
func assertionThroughput(rounds: Int, perRound: Int) throws -> (perSecond: [Double], latencies: [Double]) {
    let key = try VirtualKey()
    let device = try key.openDevice()
    var registration = MakeCredentialRequest(
        clientData: .hash([UInt8](repeating: 1, count: 32)), relyingParty: RelyingParty(id: "bench.example"),
        user: UserEntity(id: [1], name: "bench"))
    registration.residentKey = .disabled
    let credential = try device.makeCredential(registration)
    var request = GetAssertionRequest(relyingPartyID: "bench.example", clientData: .hash([UInt8](repeating: 2, count: 32)))
    request.allowList = [credential.credentialID]
    // Correctness before speed: the assertions being timed verify.
    try device.getAssertion(request).verify(es256PublicKey: credential.publicKey)
    for _ in 0..<200 { _ = try device.getAssertion(request) }

    let clock = ContinuousClock()
    var perSecond: [Double] = []
    var latencies: [Double] = []
    latencies.reserveCapacity(rounds * perRound)
    for _ in 0..<rounds {
        let roundStart = clock.now
        for _ in 0..<perRound {
            let start = clock.now
            _ = try device.getAssertion(request)
            latencies.append(milliseconds(clock.now - start))
        }
        perSecond.append(Double(perRound) / (milliseconds(clock.now - roundStart) / 1000))
    }
    return (perSecond, latencies.sorted())
}

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let rounds = quick ? 3 : 7
let perRound = quick ? 500 : 2000
let result = try assertionThroughput(rounds: rounds, perRound: perRound)
let rate = median(result.perSecond)
let report = """
    | 7 | virtual key assertions per second through libfido2, in process | ≥ 2,000/s | \
    \(Int(rate))/s (median of \(rounds) rounds of \(perRound); min \(Int(result.perSecond.min()!)), max \(Int(result.perSecond.max()!))); \
    latency p50 \(String(format: "%.3f", percentile(result.latencies, 50))) ms, p99 \(String(format: "%.3f", percentile(result.latencies, 99))) ms | \
    \(rate >= 2000 ? "met" : "missed") |
    """
print(report)
