import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// The key's CTAPHID layer, driven by hand with input libfido2 would never
/// send; after each, the key must still work for libfido2.
@Suite struct CTAPHIDTests {
    let key: VirtualKey
    let host: RawHost

    init() throws {
        key = try makeKey()
        host = RawHost(key.connect())
    }

    /// The key still registers and authenticates through libfido2.
    func expectKeyStillWorks() throws {
        let device = try key.openDevice()
        let credential = try device.makeCredential(registrationRequest())
        try device.getAssertion(assertionRequest(allow: [credential.credentialID])).verify(es256PublicKey: credential.publicKey)
    }

    func expectError(_ error: CTAPHIDError, on channel: UInt32, sourceLocation: SourceLocation = #_sourceLocation) {
        let reply = host.receiveMessage()
        #expect(reply?.channel == channel, sourceLocation: sourceLocation)
        #expect(reply?.command == CTAPHIDCommand.error.rawValue, sourceLocation: sourceLocation)
        #expect(reply?.payload == [error.rawValue], sourceLocation: sourceLocation)
    }

    @Test func initAllocatesChannelsAndEchoesTheNonce() throws {
        let nonce: [UInt8] = [9, 8, 7, 6, 5, 4, 3, 2]
        host.send(channel: CTAPHID.broadcastChannel, command: .initialize, payload: nonce)
        let reply = try #require(host.receiveMessage())
        #expect(reply.channel == CTAPHID.broadcastChannel)
        #expect(reply.payload.count == 17)
        #expect(Array(reply.payload.prefix(8)) == nonce)
        #expect(reply.payload[12] == 2, "CTAPHID protocol version")
        #expect(reply.payload[16] & 0x04 != 0, "CBOR capability")
        #expect(reply.payload[16] & 0x08 != 0, "no CTAP1 MSG")
        let first = reply.payload[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
        let second = host.allocateChannel()
        #expect(first != second)
        #expect(![0, CTAPHID.broadcastChannel].contains(first))
        // INIT on an allocated channel keeps it.
        host.send(channel: second, command: .initialize, payload: nonce)
        #expect(host.receiveMessage()?.payload[8..<12].reduce(0) { $0 << 8 | UInt32($1) } == second)
    }

    @Test func pingEchoesAMultiPacketMessage() throws {
        let channel = host.allocateChannel()
        let payload = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        host.send(channel: channel, command: .ping, payload: payload)
        let reply = try #require(host.receiveMessage())
        #expect(reply.command == CTAPHIDCommand.ping.rawValue)
        #expect(reply.payload == payload)
    }

    @Test func winkIsAnswered() throws {
        let channel = host.allocateChannel()
        host.send(channel: channel, command: .wink, payload: [])
        #expect(host.receiveMessage()?.command == CTAPHIDCommand.wink.rawValue)
    }

    @Test func badLengthsAreInvalidLength() throws {
        let channel = host.allocateChannel()
        host.sendInitialization(channel: CTAPHID.broadcastChannel, command: CTAPHIDCommand.initialize.rawValue, length: 4, data: [1, 2, 3, 4])
        expectError(.invalidLength, on: CTAPHID.broadcastChannel)
        host.sendInitialization(channel: channel, command: CTAPHIDCommand.cbor.rawValue, length: CTAPHID.maxMessageSize + 1)
        expectError(.invalidLength, on: channel)
        host.sendInitialization(channel: channel, command: CTAPHIDCommand.cbor.rawValue, length: 0)
        expectError(.invalidLength, on: channel)
        try expectKeyStillWorks()
    }

    @Test func sequenceOutOfOrderIsInvalidSequence() throws {
        let channel = host.allocateChannel()
        host.sendInitialization(channel: channel, command: CTAPHIDCommand.ping.rawValue, length: 200, data: [1])
        host.sendContinuation(channel: channel, sequence: 0)
        host.sendContinuation(channel: channel, sequence: 2)
        expectError(.invalidSequence, on: channel)
        // A new message on the channel while one is incomplete is the same mistake.
        host.sendInitialization(channel: channel, command: CTAPHIDCommand.ping.rawValue, length: 100)
        host.sendInitialization(channel: channel, command: CTAPHIDCommand.ping.rawValue, length: 1)
        expectError(.invalidSequence, on: channel)
        // A stray continuation is ignored, and the channel works.
        host.sendContinuation(channel: channel, sequence: 5)
        host.send(channel: channel, command: .ping, payload: [42])
        #expect(host.receiveMessage()?.payload == [42])
        try expectKeyStillWorks()
    }

    @Test func unknownCommandsAreInvalidCommand() throws {
        let channel = host.allocateChannel()
        for command: UInt8 in [0x03, 0x04, 0x3B, 0x3F, 0x55, 0x7F] {
            host.sendInitialization(channel: channel, command: command, length: 1, data: [0])
            expectError(.invalidCommand, on: channel)
        }
        try expectKeyStillWorks()
    }

    @Test func unknownChannelsAreInvalidChannel() throws {
        host.sendInitialization(channel: 0x1234_5678, command: CTAPHIDCommand.ping.rawValue, length: 1, data: [1])
        expectError(.invalidChannel, on: 0x1234_5678)
        host.sendInitialization(channel: 0, command: CTAPHIDCommand.initialize.rawValue, length: 8, data: [1, 2, 3, 4, 5, 6, 7, 8])
        expectError(.invalidChannel, on: 0)
        host.sendInitialization(channel: CTAPHID.broadcastChannel, command: CTAPHIDCommand.ping.rawValue, length: 1, data: [1])
        expectError(.invalidChannel, on: CTAPHID.broadcastChannel)
        try expectKeyStillWorks()
    }

    @Test func anotherChannelIsBusyDuringAMessage() throws {
        let first = host.allocateChannel()
        let second = host.allocateChannel()
        host.sendInitialization(channel: first, command: CTAPHIDCommand.ping.rawValue, length: 100, data: [7])
        host.sendInitialization(channel: second, command: CTAPHIDCommand.ping.rawValue, length: 1, data: [8])
        expectError(.channelBusy, on: second)
        host.sendContinuation(channel: first, sequence: 0)
        let reply = try #require(host.receiveMessage())
        #expect(reply.channel == first && reply.payload.count == 100 && reply.payload[0] == 7)
    }

    @Test func anAbandonedMessageTimesOut() throws {
        let channel = host.allocateChannel()
        host.sendInitialization(channel: channel, command: CTAPHIDCommand.ping.rawValue, length: 100, data: [1])
        let clock = ContinuousClock()
        let started = clock.now
        expectError(.messageTimeout, on: channel)
        #expect(clock.now - started >= .milliseconds(400))
        try expectKeyStillWorks()
    }

    @Test func keepalivesWhileWaitingAndCancelEndsTheRequest() throws {
        key.presence = .never
        let channel = host.allocateChannel()
        // authenticatorSelection (0x0B) waits for a touch.
        host.send(channel: channel, command: .cbor, payload: [0x0B])
        var keepalives: [UInt8] = []
        let nothing = host.receiveMessage(timeoutMilliseconds: 350, keepalives: &keepalives)
        #expect(nothing == nil)
        #expect(keepalives.count >= 2)
        #expect(keepalives.allSatisfy { $0 == KeepaliveStatus.userPresenceNeeded.rawValue })
        host.send(channel: channel, command: .cancel, payload: [])
        let reply = try #require(host.receiveMessage())
        #expect(reply.command == CTAPHIDCommand.cbor.rawValue)
        #expect(reply.payload == [CTAP2Status.keepaliveCancel.rawValue])
    }

    @Test func initResynchronisesABusyChannelWithoutAReply() throws {
        key.presence = .never
        let channel = host.allocateChannel()
        host.send(channel: channel, command: .cbor, payload: [0x0B])
        blockingSleep(.milliseconds(50))
        host.send(channel: channel, command: .initialize, payload: [1, 1, 1, 1, 1, 1, 1, 1])
        var keepalives: [UInt8] = []
        let reply = try #require(host.receiveMessage(keepalives: &keepalives))
        #expect(reply.command == CTAPHIDCommand.initialize.rawValue)
        #expect(host.receiveMessage(timeoutMilliseconds: 300) == nil, "the abandoned request is never answered")
        key.presence = .immediate
        try expectKeyStillWorks()
    }

    @Test func aHostThatLeavesMidMessageFreesTheKey() throws {
        let leaving = RawHost(key.connect())
        let channel = leaving.allocateChannel()
        leaving.sendInitialization(channel: channel, command: CTAPHIDCommand.cbor.rawValue, length: 500, data: [1])
        leaving.connection.close()
        try expectKeyStillWorks()
    }
}
