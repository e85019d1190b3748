import Dispatch
import SystemKit

/// The layer behind CTAPHID that runs CTAP2 commands.
protocol CBORCommandProcessor: AnyObject, Sendable {
    /// Runs one CTAP2 request (command byte and CBOR parameters) and returns
    /// the response (status byte and CBOR). Called on the key's firmware
    /// queue, one request at a time; may block while waiting for the user.
    func process(_ request: [UInt8], context: CommandContext) -> [UInt8]
    /// CTAPHID_WINK: show the user which key this is.
    func wink()
}

/// The key's USB-HID face (CTAP 2.1 §11.2): channel allocation, message
/// reassembly, one transaction at a time, keepalives, cancel, and the
/// CTAPHID errors a host gets for malformed input.
///
/// Reports arrive from any number of hosts (`HostPort`s), as several
/// programs may open one hidraw node; a reply goes back to the port that
/// sent the request.
final class CTAPHIDTransport: Sendable {
    struct Version: Sendable {
        var major: UInt8 = 1
        var minor: UInt8 = 0
        var build: UInt8 = 0
    }

    private enum Phase {
        case receiving(MessageAssembler)
        case processing(CommandContext)
    }

    private struct Transaction {
        let id: UInt64
        let port: any HostPort
        let channel: UInt32
        var phase: Phase
        /// Bumped by each packet, so a stale timeout knows it is stale.
        var activity: UInt64 = 0
    }

    private struct State {
        var channels = ChannelTable()
        var transaction: Transaction?
        var nextTransactionID: UInt64 = 1
    }

    private let state = Protected(State())
    private let processor: any CBORCommandProcessor
    /// CTAPHID_MSG's processor, for a key of the `u2f` personality; nil for
    /// a CTAP2 key, which offers no CTAPHID_MSG.
    private let messageProcessor: (any MessageCommandProcessor)?
    private let faults: FaultInjector
    private let firmware = DispatchQueue(label: "authkeyd.virtual-key.firmware")
    private let timers = DispatchQueue(label: "authkeyd.virtual-key.timers")
    private let version: Version
    /// How long the key waits for the next packet of a message.
    let messageTimeout: Duration
    /// How often a waiting command tells the host it is still busy.
    static let keepaliveInterval = 100

    static let capabilities: CTAPHIDCapabilities = [.wink, .cbor, .noMessage]
    /// A U2F-only key's: neither CBOR nor NMSG.
    static let u2fCapabilities: CTAPHIDCapabilities = [.wink]

    /// INIT's capability flags, as the key's personality has them.
    var capabilities: CTAPHIDCapabilities { messageProcessor == nil ? Self.capabilities : Self.u2fCapabilities }

    /// The commands a host may send besides INIT and CANCEL.
    private var acceptedCommands: [CTAPHIDCommand] { messageProcessor == nil ? [.ping, .wink, .cbor] : [.ping, .wink, .msg] }

    init(
        processor: any CBORCommandProcessor, messageProcessor: (any MessageCommandProcessor)? = nil,
        faults: FaultInjector, version: Version = Version(), messageTimeout: Duration = .milliseconds(500)
    ) {
        self.processor = processor
        self.messageProcessor = messageProcessor
        self.faults = faults
        self.version = version
        self.messageTimeout = messageTimeout
    }

    // MARK: - Input

    /// Takes one report from a host. Reports that are not 64 bytes cannot
    /// come through HID and are ignored.
    func receive(report: [UInt8], from port: any HostPort) {
        guard let packet = CTAPHIDPacket(report: report) else { return }
        state.withLock { state in
            switch packet {
            case .initialization(let channel, let command, let length, let data):
                if command == CTAPHIDCommand.initialize.rawValue {
                    handleInit(channel: channel, length: length, nonce: data, port: port, state: &state)
                } else {
                    handleInitialization(
                        channel: channel, command: command, length: length, data: data, port: port, state: &state)
                }
            case .continuation(let channel, let sequence, let data):
                handleContinuation(channel: channel, sequence: sequence, data: data, port: port, state: &state)
            }
        }
    }

    /// A host went away: whatever it started ends, and the key is free.
    func portClosed(_ port: any HostPort) {
        state.withLock { state in
            guard let transaction = state.transaction, transaction.port === port else { return }
            abort(transaction)
            state.transaction = nil
        }
    }

    /// Power cycle: every channel and transaction is forgotten.
    func reset() {
        state.withLock { state in
            if let transaction = state.transaction { abort(transaction) }
            state = State(nextTransactionID: state.nextTransactionID)
        }
    }

    // MARK: - Packet handling (called with the state locked)

    private func handleInit(channel: UInt32, length: Int, nonce: [UInt8], port: any HostPort, state: inout State) {
        guard length == 8 else { return sendError(.invalidLength, channel: channel, to: port) }
        guard channel != 0 else { return sendError(.invalidChannel, channel: channel, to: port) }
        let assigned: UInt32
        if channel == CTAPHID.broadcastChannel {
            assigned = state.channels.allocate()
        } else {
            guard state.channels.contains(channel) else { return sendError(.invalidChannel, channel: channel, to: port) }
            // INIT on an allocated channel resynchronises it: whatever it was
            // doing is abandoned, without a reply (CTAP 2.1 §11.2.9.1.3).
            if let transaction = state.transaction, transaction.channel == channel {
                abort(transaction)
                state.transaction = nil
            }
            assigned = channel
        }
        var reply = Array(nonce.prefix(8))
        reply += [UInt8(assigned >> 24), UInt8(truncatingIfNeeded: assigned >> 16),
                  UInt8(truncatingIfNeeded: assigned >> 8), UInt8(truncatingIfNeeded: assigned)]
        reply += [CTAPHID.protocolVersion, version.major, version.minor, version.build, capabilities.rawValue]
        send(command: .initialize, payload: reply, channel: channel, to: port)
    }

    private func handleInitialization(
        channel: UInt32, command: UInt8, length: Int, data: [UInt8], port: any HostPort, state: inout State
    ) {
        let isCancel = command == CTAPHIDCommand.cancel.rawValue
        guard channel != 0, channel != CTAPHID.broadcastChannel, state.channels.contains(channel) else {
            return sendError(.invalidChannel, channel: channel, to: port)
        }
        if let transaction = state.transaction {
            let ownChannel = transaction.channel == channel && transaction.port === port
            switch transaction.phase {
            case .processing(let context) where ownChannel && isCancel:
                context.cancel()
            case .receiving where ownChannel:
                // A new message while the last one is incomplete.
                state.transaction = nil
                sendError(.invalidSequence, channel: channel, to: port)
            default:
                // CANCEL for a channel with nothing pending is ignored.
                if !isCancel { sendError(.channelBusy, channel: channel, to: port) }
            }
            return
        }
        if isCancel { return }
        guard let known = CTAPHIDCommand(rawValue: command), acceptedCommands.contains(known) else {
            return sendError(.invalidCommand, channel: channel, to: port)
        }
        guard length <= CTAPHID.maxMessageSize, ![.cbor, .msg].contains(known) || length > 0 else {
            return sendError(.invalidLength, channel: channel, to: port)
        }
        let assembler = MessageAssembler(channel: channel, command: command, length: length, firstData: data)
        let id = state.nextTransactionID
        state.nextTransactionID += 1
        state.transaction = Transaction(id: id, port: port, channel: channel, phase: .receiving(assembler))
        if assembler.isComplete {
            dispatch(assembler, state: &state)
        } else {
            armMessageTimeout(transactionID: id, activity: 0)
        }
    }

    private func handleContinuation(channel: UInt32, sequence: UInt8, data: [UInt8], port: any HostPort, state: inout State) {
        // A continuation that belongs to no message in progress is ignored.
        guard var transaction = state.transaction, transaction.channel == channel, transaction.port === port,
            case .receiving(var assembler) = transaction.phase
        else { return }
        do {
            try assembler.append(sequence: sequence, data: data)
        } catch {
            state.transaction = nil
            return sendError(error, channel: channel, to: port)
        }
        transaction.phase = .receiving(assembler)
        transaction.activity += 1
        state.transaction = transaction
        if assembler.isComplete {
            dispatch(assembler, state: &state)
        } else {
            armMessageTimeout(transactionID: transaction.id, activity: transaction.activity)
        }
    }

    /// A whole message has arrived: answer PING and WINK at once, hand CBOR
    /// (or a U2F key's MSG) to the firmware.
    private func dispatch(_ message: MessageAssembler, state: inout State) {
        guard let transaction = state.transaction else { return }
        switch CTAPHIDCommand(rawValue: message.command) {
        case .ping:
            state.transaction = nil
            send(command: .ping, payload: message.payload, channel: message.channel, to: transaction.port)
        case .wink:
            state.transaction = nil
            processor.wink()
            send(command: .wink, payload: [], channel: message.channel, to: transaction.port)
        default:
            if faults.refusesRequest() {
                state.transaction = nil
                return sendError(.channelBusy, channel: message.channel, to: transaction.port)
            }
            let id = transaction.id
            let context = CommandContext(transactionID: id) { [weak self] status in
                self?.sendKeepalive(status, transactionID: id)
            }
            state.transaction?.phase = .processing(context)
            let request = message.payload
            let command = message.command
            firmware.async { [self] in
                let response: [UInt8]
                if command == CTAPHIDCommand.msg.rawValue, let messageProcessor {
                    response = messageProcessor.process(message: request)
                } else {
                    response = processor.process(request, context: context)
                }
                finish(transactionID: id, command: command, response: response)
            }
        }
    }

    private func abort(_ transaction: Transaction) {
        if case .processing(let context) = transaction.phase { context.cancel() }
    }

    // MARK: - Output

    private func finish(transactionID: UInt64, command: UInt8, response: [UInt8]) {
        let destination = state.withLock { state -> Transaction? in
            // An aborted transaction (INIT resync, host gone) gets no reply.
            guard let transaction = state.transaction, transaction.id == transactionID else { return nil }
            state.transaction = nil
            return transaction
        }
        guard let destination else { return }
        // Delivered outside the lock: a fault may unplug the key, which
        // resets this transport.
        let reports = CTAPHIDPacket.reports(
            channel: destination.channel, command: command, payload: response)
        faults.deliverResponse(reports, to: destination.port)
    }

    private func sendKeepalive(_ status: KeepaliveStatus, transactionID: UInt64) {
        state.withLock { state in
            guard let transaction = state.transaction, transaction.id == transactionID else { return }
            send(command: .keepalive, payload: [status.rawValue], channel: transaction.channel, to: transaction.port)
        }
    }

    private func armMessageTimeout(transactionID: UInt64, activity: UInt64) {
        timers.asyncAfter(deadline: .now() + .milliseconds(messageTimeout.wholeMilliseconds)) { [weak self] in
            self?.state.withLock { state in
                guard let transaction = state.transaction, transaction.id == transactionID,
                    transaction.activity == activity, case .receiving = transaction.phase
                else { return }
                state.transaction = nil
                self?.sendError(.messageTimeout, channel: transaction.channel, to: transaction.port)
            }
        }
    }

    private func sendError(_ error: CTAPHIDError, channel: UInt32, to port: any HostPort) {
        send(command: .error, payload: [error.rawValue], channel: channel, to: port)
    }

    private func send(command: CTAPHIDCommand, payload: [UInt8], channel: UInt32, to port: any HostPort) {
        for report in CTAPHIDPacket.reports(channel: channel, command: command.rawValue, payload: payload) {
            port.deliver(report: report)
        }
    }
}

/// The channel ids handed out by INIT. Bounded, so that a host allocating
/// channels in a loop cannot grow the key's memory: the oldest are forgotten.
struct ChannelTable {
    private var active: Set<UInt32> = []
    private var order: [UInt32] = []
    private var next: UInt32 = 1
    static let capacity = 1024

    func contains(_ channel: UInt32) -> Bool { active.contains(channel) }

    mutating func allocate() -> UInt32 {
        repeat { next = next &+ 1 } while next == 0 || next == CTAPHID.broadcastChannel || active.contains(next)
        active.insert(next)
        order.append(next)
        if order.count > Self.capacity {
            active.remove(order.removeFirst())
        }
        return next
    }
}
