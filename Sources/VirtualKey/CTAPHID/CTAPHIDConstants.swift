import HIDReports

/// CTAPHID commands (CTAP 2.1 §11.2.9), without the initialization-packet
/// bit 0x80 that they carry on the wire.
public enum CTAPHIDCommand: UInt8, Sendable {
    case ping = 0x01
    case msg = 0x03
    case lock = 0x04
    case initialize = 0x06
    case wink = 0x08
    case cbor = 0x10
    case cancel = 0x11
    case keepalive = 0x3B
    case error = 0x3F
}

/// The payload byte of a CTAPHID_ERROR reply (CTAP 2.1 §11.2.9.1.6).
public enum CTAPHIDError: UInt8, Sendable, Error {
    case invalidCommand = 0x01
    case invalidParameter = 0x02
    case invalidLength = 0x03
    case invalidSequence = 0x04
    case messageTimeout = 0x05
    case channelBusy = 0x06
    case lockRequired = 0x0A
    case invalidChannel = 0x0B
    case other = 0x7F
}

/// The status byte of a CTAPHID_KEEPALIVE.
public enum KeepaliveStatus: UInt8, Sendable {
    case processing = 0x01
    case userPresenceNeeded = 0x02
}

/// Capability flags of the CTAPHID_INIT reply.
public struct CTAPHIDCapabilities: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let wink = CTAPHIDCapabilities(rawValue: 0x01)
    public static let cbor = CTAPHIDCapabilities(rawValue: 0x04)
    /// The device does not implement CTAPHID_MSG (CTAP1/U2F).
    public static let noMessage = CTAPHIDCapabilities(rawValue: 0x08)
}

public enum CTAPHID {
    /// The size of every report, without a report-ID byte.
    public static let reportSize = hidReportSize
    public static let initializationDataSize = reportSize - 7
    public static let continuationDataSize = reportSize - 5
    /// The largest message: one initialization packet and 128 continuations.
    public static let maxMessageSize = initializationDataSize + 128 * continuationDataSize
    public static let broadcastChannel: UInt32 = 0xFFFF_FFFF
    /// The CTAPHID protocol version reported by INIT.
    public static let protocolVersion: UInt8 = 2
}
