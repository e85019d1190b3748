import Dispatch
import SystemKit

/// A misbehaviour the virtual key can be told to show in its CTAP2 replies,
/// for testing how hosts and the daemon cope with broken devices.
public enum Fault: Sendable, Equatable {
    /// Drop one report of the reply (0 is the first).
    case dropReport(index: Int)
    /// Garble one report's payload, as a noisy line would.
    case corruptReport(index: Int)
    /// Deliver the whole reply late.
    case delay(Duration)
    /// Answer on a channel the host did not ask on.
    case wrongChannel
    /// Send the first report of the reply and never the rest.
    case stallMidMessage
    /// Disappear, as if unplugged, instead of answering.
    case vanish
    /// Refuse the request unprocessed with CTAPHID ERROR `ERR_CHANNEL_BUSY`,
    /// as a key does while another host's transaction is in flight on
    /// another channel. Unlike the others it hits a request, not a reply;
    /// it is counted the same way (`FaultRule`).
    case channelBusy
}

/// When a fault applies: after letting `skip` replies through, to the next
/// `count` replies (all of them when nil).
public struct FaultRule: Sendable, Equatable {
    public var fault: Fault
    public var skip: Int
    public var count: Int?

    public init(_ fault: Fault, skip: Int = 0, count: Int? = 1) {
        self.fault = fault
        self.skip = skip
        self.count = count
    }
}

/// Applies the configured faults to CTAP2 replies on their way to the host.
/// CTAPHID's own replies (INIT, PING, errors) are never touched, so a faulty
/// key still opens and can be diagnosed.
final class FaultInjector: Sendable {
    private let rules = Protected<[FaultRule]>([])
    private let vanishHandler = Protected<(@Sendable () -> Void)?>(nil)
    /// A serial queue of its own, not `DispatchQueue.global()`: that pool
    /// has about one thread per core, threads blocked in a host's read
    /// hold it, and a 200 ms delay there was seen to fire seconds late.
    /// A serial queue targets the overcommitting pool, which always finds
    /// a thread.
    private let lateReplies = DispatchQueue(label: "authkeyd.virtual-key.late-replies")

    func setRules(_ newRules: [FaultRule]) { rules.withLock { $0 = newRules } }
    func onVanish(_ handler: @escaping @Sendable () -> Void) { vanishHandler.withLock { $0 = handler } }

    /// Whether the request that just came is to be refused as busy
    /// (`Fault.channelBusy`), counting it against its rule. A request let
    /// through is counted by its reply.
    func refusesRequest() -> Bool {
        rules.withLock { rules in
            guard let index = rules.indices.first, rules[index].fault == .channelBusy, rules[index].skip == 0 else {
                return false
            }
            Self.count(&rules, at: index)
            return true
        }
    }

    /// Takes the fault that applies to this reply, counting it against its rule.
    private func nextFault() -> Fault? {
        rules.withLock { rules in
            guard let index = rules.indices.first else { return nil }
            if rules[index].skip > 0 {
                rules[index].skip -= 1
                return nil
            }
            // Its request was refused before any reply (`refusesRequest`).
            if rules[index].fault == .channelBusy { return nil }
            let fault = rules[index].fault
            Self.count(&rules, at: index)
            return fault
        }
    }

    private static func count(_ rules: inout [FaultRule], at index: Int) {
        if let count = rules[index].count {
            if count <= 1 { rules.remove(at: index) } else { rules[index].count = count - 1 }
        }
    }

    func deliverResponse(_ reports: [[UInt8]], to port: any HostPort) {
        guard let fault = nextFault() else {
            for report in reports { port.deliver(report: report) }
            return
        }
        switch fault {
        case .dropReport(let index):
            for (i, report) in reports.enumerated() where i != index { port.deliver(report: report) }
        case .corruptReport(let index):
            for (i, report) in reports.enumerated() {
                var report = report
                // Keep the header (channel, command, length) so the host
                // reads the garbage as the reply.
                let payloadStart = i == 0 ? 7 : 5
                if i == index { for j in payloadStart..<report.count { report[j] ^= 0xA5 } }
                port.deliver(report: report)
            }
        case .delay(let duration):
            lateReplies.asyncAfter(deadline: .now() + .milliseconds(duration.wholeMilliseconds)) {
                for report in reports { port.deliver(report: report) }
            }
        case .wrongChannel:
            for var report in reports {
                report[3] ^= 0x5A
                port.deliver(report: report)
            }
        case .stallMidMessage:
            if let first = reports.first { port.deliver(report: first) }
        case .vanish:
            let handler = vanishHandler.withLock { $0 }
            handler?()
        case .channelBusy:
            // Taken as a request's fault, never as a reply's (`nextFault`).
            for report in reports { port.deliver(report: report) }
        }
    }
}
