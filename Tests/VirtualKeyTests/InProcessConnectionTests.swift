import FIDO2
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// The in-process front end's lifetime.
@Suite struct InProcessConnectionTests {
    /// Found by LeakSanitizer: the key's table of connections and each
    /// connection's key kept each other alive, so a host that dropped its
    /// connection without closing it leaked both.
    @Test func aConnectionDroppedWithoutClosingFreesItsKey() throws {
        weak var weakKey: VirtualKey?
        weak var weakConnection: InProcessConnection?
        do {
            let key = try makeKey()
            weakKey = key
            let connection = key.connect()
            weakConnection = connection
            let host = RawHost(connection)
            host.send(channel: CTAPHID.broadcastChannel, command: .initialize, payload: [1, 2, 3, 4, 5, 6, 7, 8])
            #expect(host.receivePacket() != nil, "the key answered INIT")
        }
        #expect(weakConnection == nil)
        #expect(weakKey == nil)
    }

    /// A dropped connection still leaves the key working for other hosts.
    @Test func theKeyServesOthersAfterAHostDroppedItsConnection() throws {
        let key = try makeKey()
        do {
            let host = RawHost(key.connect())
            host.send(channel: CTAPHID.broadcastChannel, command: .initialize, payload: [8, 7, 6, 5, 4, 3, 2, 1])
            _ = host.receivePacket()
        }
        let device = try key.openDevice()
        try device.makeCredential(registrationRequest()).verify()
        key.unplug()
        #expect(throws: FIDO2Error.self) { try device.makeCredential(registrationRequest()) }
    }
}
