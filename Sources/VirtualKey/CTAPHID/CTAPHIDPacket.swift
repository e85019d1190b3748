/// One 64-byte CTAPHID report, parsed (CTAP 2.1 §11.2.4).
public enum CTAPHIDPacket: Equatable, Sendable {
    /// The first packet of a message: command (bit 0x80 removed), the full
    /// message length, and the first up to 57 bytes.
    case initialization(channel: UInt32, command: UInt8, length: Int, data: [UInt8])
    /// A following packet: sequence number 0–127 and up to 59 bytes.
    case continuation(channel: UInt32, sequence: UInt8, data: [UInt8])

    /// Parses a report; nil when it is not exactly 64 bytes.
    public init?(report: [UInt8]) {
        guard report.count == CTAPHID.reportSize else { return nil }
        let channel = UInt32(report[0]) << 24 | UInt32(report[1]) << 16 | UInt32(report[2]) << 8 | UInt32(report[3])
        if report[4] & 0x80 != 0 {
            let length = Int(report[5]) << 8 | Int(report[6])
            self = .initialization(channel: channel, command: report[4] & 0x7F, length: length, data: Array(report[7...]))
        } else {
            self = .continuation(channel: channel, sequence: report[4], data: Array(report[5...]))
        }
    }

    public var channel: UInt32 {
        switch self {
        case .initialization(let channel, _, _, _), .continuation(let channel, _, _): return channel
        }
    }

    /// Splits a message into the reports that carry it, zero-padded to 64 bytes.
    public static func reports(channel: UInt32, command: UInt8, payload: [UInt8]) -> [[UInt8]] {
        precondition(payload.count <= CTAPHID.maxMessageSize, "CTAPHID message too long")
        let channelBytes = [UInt8(channel >> 24), UInt8(truncatingIfNeeded: channel >> 16),
                            UInt8(truncatingIfNeeded: channel >> 8), UInt8(truncatingIfNeeded: channel)]
        var reports: [[UInt8]] = []
        var first = channelBytes + [command | 0x80, UInt8(payload.count >> 8), UInt8(truncatingIfNeeded: payload.count)]
        first += payload.prefix(CTAPHID.initializationDataSize)
        reports.append(padded(first))
        var offset = min(payload.count, CTAPHID.initializationDataSize)
        var sequence: UInt8 = 0
        while offset < payload.count {
            let end = min(payload.count, offset + CTAPHID.continuationDataSize)
            reports.append(padded(channelBytes + [sequence] + payload[offset..<end]))
            offset = end
            sequence += 1
        }
        return reports
    }

    private static func padded(_ report: [UInt8]) -> [UInt8] {
        report + [UInt8](repeating: 0, count: CTAPHID.reportSize - report.count)
    }
}

/// Reassembles one message from its packets, checking sequence numbers.
struct MessageAssembler {
    let channel: UInt32
    let command: UInt8
    let expectedLength: Int
    private(set) var payload: [UInt8]
    private var nextSequence: UInt8 = 0

    /// Starts from an initialization packet whose length was already checked.
    init(channel: UInt32, command: UInt8, length: Int, firstData: [UInt8]) {
        self.channel = channel
        self.command = command
        self.expectedLength = length
        payload = Array(firstData.prefix(length))
        payload.reserveCapacity(length)
    }

    var isComplete: Bool { payload.count >= expectedLength }

    /// Adds a continuation packet; throws `invalidSequence` when it is not the next one.
    mutating func append(sequence: UInt8, data: [UInt8]) throws(CTAPHIDError) {
        guard sequence == nextSequence, sequence < 0x80 else { throw .invalidSequence }
        nextSequence += 1
        payload += data.prefix(expectedLength - payload.count)
    }
}
