import HIDReports
import SystemKit
import VirtualKey

/// A CTAPHID host written by hand, for sending a key what libfido2 never
/// would: malformed packets, stray channels, half messages.
public final class RawHost {
    public let connection: any HIDReportConnection

    public init(_ connection: any HIDReportConnection) {
        self.connection = connection
    }

    public func send(_ report: [UInt8]) {
        precondition(connection.send(report: report), "the key refused a report")
    }

    /// Sends a whole message, split into packets as CTAPHID does.
    public func send(channel: UInt32, command: CTAPHIDCommand, payload: [UInt8]) {
        for report in CTAPHIDPacket.reports(channel: channel, command: command.rawValue, payload: payload) {
            send(report)
        }
    }

    /// An initialization packet with any header at all.
    public func sendInitialization(channel: UInt32, command: UInt8, length: Int, data: [UInt8] = []) {
        var report = bigEndian(channel) + [command | 0x80, UInt8(length >> 8), UInt8(truncatingIfNeeded: length)] + data
        report += [UInt8](repeating: 0, count: 64 - report.count)
        send(report)
    }

    /// A continuation packet with any sequence number.
    public func sendContinuation(channel: UInt32, sequence: UInt8, data: [UInt8] = []) {
        var report = bigEndian(channel) + [sequence] + data
        report += [UInt8](repeating: 0, count: 64 - report.count)
        send(report)
    }

    public func receivePacket(timeoutMilliseconds: Int = 2000) -> CTAPHIDPacket? {
        connection.receive(timeoutMilliseconds: timeoutMilliseconds).flatMap { CTAPHIDPacket(report: $0) }
    }

    /// Reassembles the next message arriving within the timeout; keepalives
    /// are collected, not returned.
    public func receiveMessage(
        timeoutMilliseconds: Int = 2000, keepalives: inout [UInt8]
    ) -> (channel: UInt32, command: UInt8, payload: [UInt8])? {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        func remaining() -> Int { max(0, (deadline - ContinuousClock.now).wholeMilliseconds) }
        while let packet = receivePacket(timeoutMilliseconds: remaining()) {
            guard case .initialization(let channel, let command, let length, let data) = packet else { continue }
            if command == CTAPHIDCommand.keepalive.rawValue {
                keepalives.append(data[0])
                continue
            }
            var payload = Array(data.prefix(length))
            while payload.count < length {
                guard case .continuation(_, _, let more)? = receivePacket(timeoutMilliseconds: remaining()) else {
                    return nil
                }
                payload += more.prefix(length - payload.count)
            }
            return (channel, command, payload)
        }
        return nil
    }

    public func receiveMessage(timeoutMilliseconds: Int = 2000) -> (channel: UInt32, command: UInt8, payload: [UInt8])? {
        var ignored: [UInt8] = []
        return receiveMessage(timeoutMilliseconds: timeoutMilliseconds, keepalives: &ignored)
    }

    /// CTAPHID_INIT on the broadcast channel; returns the channel the key allocated.
    public func allocateChannel() -> UInt32 {
        let nonce: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        send(channel: CTAPHID.broadcastChannel, command: .initialize, payload: nonce)
        guard let reply = receiveMessage(), reply.command == CTAPHIDCommand.initialize.rawValue,
            Array(reply.payload.prefix(8)) == nonce
        else { preconditionFailure("INIT failed") }
        return reply.payload[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A CTAP2 request over CTAPHID_CBOR; returns the status byte and the rest.
    public func cbor(channel: UInt32, _ request: [UInt8]) -> (status: UInt8, body: [UInt8])? {
        send(channel: channel, command: .cbor, payload: request)
        guard let reply = receiveMessage(), reply.command == CTAPHIDCommand.cbor.rawValue, !reply.payload.isEmpty else {
            return nil
        }
        return (reply.payload[0], Array(reply.payload.dropFirst()))
    }
}

public func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
     UInt8(truncatingIfNeeded: value)]
}
