import VirtualKey

/// A CTAPHID host on an in-process connection to a virtual key: what a
/// harness needs to send reports and read whole replies, and no checks of
/// its own (the key must cope with whatever is sent).
final class KeyHost {
    let key: VirtualKey
    private(set) var connection: InProcessConnection

    /// How long a CTAP2 request may take before the key counts as hung. The
    /// simulated user answers at once, so a healthy key replies in milliseconds.
    static let hangLimitMilliseconds = 15_000

    init(key: VirtualKey) {
        self.key = key
        connection = key.connect()
    }

    /// Sends one report; false when the key is unplugged.
    @discardableResult
    func send(_ report: [UInt8]) -> Bool { connection.send(report: report) }

    func send(channel: UInt32, command: UInt8, payload: [UInt8]) {
        for report in CTAPHIDPacket.reports(channel: channel, command: command, payload: payload.prefix(CTAPHID.maxMessageSize).map { $0 }) {
            send(report)
        }
    }

    /// Takes whatever the key has sent so far, without waiting.
    @discardableResult
    func drain() -> [[UInt8]] {
        var reports: [[UInt8]] = []
        while let report = connection.receive(timeoutMilliseconds: 0) {
            FuzzTrace.log("key sends \(FuzzTrace.hex(report, limit: 12))")
            reports.append(report)
        }
        return reports
    }

    /// The next whole message within the time limit, on `channel` if one is
    /// given; keepalives and other channels' messages are skipped.
    func message(on wanted: UInt32? = nil, timeoutMilliseconds: Int) -> (channel: UInt32, command: UInt8, payload: [UInt8])? {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        func remaining() -> Int { max(0, (deadline - ContinuousClock.now).wholeMilliseconds) }
        while let report = connection.receive(timeoutMilliseconds: remaining()) {
            guard case .initialization(let channel, let command, let length, let data)? = CTAPHIDPacket(report: report),
                command != CTAPHIDCommand.keepalive.rawValue, channel == wanted ?? channel
            else { continue }
            var payload = Array(data.prefix(length))
            while payload.count < length {
                guard let next = connection.receive(timeoutMilliseconds: remaining()),
                    case .continuation(channel, _, let more)? = CTAPHIDPacket(report: next)
                else { return nil }
                payload += more.prefix(length - payload.count)
            }
            return (channel, command, payload)
        }
        return nil
    }

    /// CTAPHID_INIT on the broadcast channel: the channel the key allocates.
    func allocateChannel() -> UInt32 {
        let nonce: [UInt8] = [0x66, 0x75, 0x7A, 0x7A, 0x6E, 0x6F, 0x6E, 0x63]
        send(channel: CTAPHID.broadcastChannel, command: CTAPHIDCommand.initialize.rawValue, payload: nonce)
        let reply = message(timeoutMilliseconds: Self.hangLimitMilliseconds)
        require(reply?.command == CTAPHIDCommand.initialize.rawValue && reply?.payload.prefix(8).elementsEqual(nonce) == true,
                "the key did not answer CTAPHID_INIT")
        return reply!.payload[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// One CTAP2 request over CTAPHID_CBOR: the reply (status byte first),
    /// or nil when the key refused the message at the CTAPHID level.
    func cbor(channel: UInt32, _ request: [UInt8]) -> [UInt8]? {
        drain()
        send(channel: channel, command: CTAPHIDCommand.cbor.rawValue, payload: request)
        let reply = message(timeoutMilliseconds: Self.hangLimitMilliseconds)
        require(reply != nil || !key.isPluggedIn, "no reply to a CTAP2 request within \(Self.hangLimitMilliseconds) ms")
        guard let reply, reply.command == CTAPHIDCommand.cbor.rawValue, !reply.payload.isEmpty else { return nil }
        return reply.payload
    }

    /// A new connection in place of this one (the old one is closed, which
    /// abandons whatever it had started).
    func reconnect() {
        connection.close()
        connection = key.connect()
    }

    /// Waits until the key has finished what was sent: a new connection, so
    /// that an unfinished message is abandoned, and a getInfo (a U2F key's
    /// VERSION), which the key's firmware runs only after the requests
    /// before it.
    func settle() {
        if !key.isPluggedIn { key.plugIn() }
        reconnect()
        let channel = allocateChannel()
        if key.configuration.ctap == .u2f {
            drain()
            send(channel: channel, command: CTAPHIDCommand.msg.rawValue, payload: [0, 3, 0, 0])
            let reply = message(timeoutMilliseconds: Self.hangLimitMilliseconds)
            require(reply?.payload.suffix(2).elementsEqual([0x90, 0x00]) == true, "U2F VERSION failed after the input")
        } else {
            require(cbor(channel: channel, [0x04])?.first == 0, "getInfo failed after the input")
        }
        connection.close()
    }
}
