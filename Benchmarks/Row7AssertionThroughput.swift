import FIDO2
import VirtualKey
import VirtualKeyDevice

/// One in-process virtual key opened through libfido2's custom I/O, with
/// one non-discoverable credential, and the getAssertion request for it:
/// what rows 1 and 7 drive directly.
struct DirectKey {
    let device: Device
    let request: GetAssertionRequest
    /// Kept alive as long as the device is used.
    let key: VirtualKey

    /// `spec` as `authkeyd --virtual-key=SPEC` takes it, so that the key
    /// is configured exactly as the daemon's.
    init(spec: String) throws {
        key = try VirtualKey(configuration: try VirtualKeyConfiguration(spec: spec))
        device = try key.openDevice()
        var registration = MakeCredentialRequest(
            clientData: .hash([UInt8](repeating: 1, count: 32)), relyingParty: RelyingParty(id: "bench.example"),
            user: UserEntity(id: [1], name: "bench"))
        registration.residentKey = .disabled
        let credential = try device.makeCredential(registration)
        var request = GetAssertionRequest(relyingPartyID: "bench.example", clientData: .hash([UInt8](repeating: 2, count: 32)))
        request.allowList = [credential.credentialID]
        self.request = request
        // Correctness before speed: the assertions being timed verify.
        try device.getAssertion(request).verify(es256PublicKey: credential.publicKey)
    }

    /// One assertion; returns its milliseconds.
    func assert() throws -> Double {
        let start = now()
        _ = try device.getAssertion(request)
        return milliseconds(start, now())
    }
}

/// Row 7: getAssertion through libfido2 on the in-process virtual key.
func assertionThroughput(_ settings: Settings) throws -> Row {
    var row = Row(7, "virtual key assertions per second through libfido2, in process", target: "≥ 2,000/s")
    let rounds = settings.pick(full: 7, quick: 3)
    let perRound = settings.pick(full: 2000, quick: 300)
    let key = try DirectKey(spec: "name=Bench")
    for _ in 0..<200 { _ = try key.assert() }

    var perSecond: [Double] = []
    // The same per second of this process's CPU time (the caller's thread
    // and the key's): what other load on the machine does not change.
    var perCPUSecond: [Double] = []
    var latencies: [Double] = []
    latencies.reserveCapacity(rounds * perRound)
    for round in 1...rounds {
        progress("row 7: round \(round) of \(rounds)")
        let roundStart = now()
        let cpuStart = ownCPUTime()
        for _ in 0..<perRound { latencies.append(try key.assert()) }
        perSecond.append(Double(perRound) / (milliseconds(roundStart, now()) / 1000))
        perCPUSecond.append(Double(perRound) / (Double(ownCPUTime() - cpuStart) / 1e9))
    }
    let rate = median(perSecond)
    let latency = Distribution(latencies)
    row.measured = "\(grouped(Int(rate)))/s (median of \(rounds) rounds of \(grouped(perRound)); "
        + "min \(grouped(Int(perSecond.min()!))), max \(grouped(Int(perSecond.max()!)))); "
        + "latency p50 \(fixed(latency.p50, 3)) ms, p99 \(fixed(latency.p99, 3)) ms; "
        + "\(grouped(Int(median(perCPUSecond))))/s of CPU time"
    if !settings.quick { row.judge(rate >= 2000) }
    row.method = [
        "One in-process virtual key (`name=Bench`, presence immediate, no PIN) opened through libfido2's custom I/O;",
        "one non-discoverable credential; `fido_dev_get_assert` with an allow list. The first assertion is verified",
        "with `fido_assert_verify`, 200 more warm up, then \(rounds) rounds of \(grouped(perRound)) are timed, each",
        "assertion on its own as well. The process is pinned to one core (`taskset -c 0`): libfido2's caller and the",
        "key's firmware thread share it. Judged: the median round's assertions per second of wall time. Beside it,",
        "assertions per second of the process's CPU time (`CLOCK_PROCESS_CPUTIME_ID`), which other load on a shared",
        "machine does not lower: when the two differ much, the machine was busy. (`Benchmarks/Row7AssertionThroughput.swift`)",
        "",
        "- rounds: \(perSecond.map { grouped(Int($0)) }.joined(separator: ", ")) assertions/s",
        "- per CPU second, the same rounds: \(perCPUSecond.map { grouped(Int($0)) }.joined(separator: ", "))",
        "- latency per assertion: \(latency.summary())",
    ]
    return row
}
