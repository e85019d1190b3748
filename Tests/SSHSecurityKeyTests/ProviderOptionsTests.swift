import SSHSecurityKey
import Testing

/// OpenSSH's options, as its own middleware reads them.
@Suite struct ProviderOptionsTests {
    typealias Option = ProviderOptions.Option

    @Test func deviceAndUserAreRead() throws {
        let options = try ProviderOptions(
            [Option(name: "device", value: "/dev/hidraw3", required: true), Option(name: "user", value: "alice", required: true)],
            accepted: ["device", "user"])
        #expect(options.device == "/dev/hidraw3")
        #expect(options.user == "alice")
    }

    /// The user id is the name in 32 bytes, zero-padded: the same id
    /// OpenSSH's built-in middleware enrolls with.
    @Test func theUserIDIsTheNameZeroPaddedTo32Bytes() throws {
        let alice = try ProviderOptions([Option(name: "user", value: "alice", required: true)], accepted: ["user"])
        #expect(try alice.userID() == Array("alice".utf8) + [UInt8](repeating: 0, count: 27))
        #expect(try ProviderOptions([], accepted: ["user"]).userID() == [UInt8](repeating: 0, count: 32))
        let long = try ProviderOptions([Option(name: "user", value: String(repeating: "x", count: 32), required: true)], accepted: ["user"])
        #expect(throws: ProviderError.self) { try long.userID() }
    }

    @Test func anUnknownRequiredOptionIsRefusedAndAnOptionalOneIgnored() throws {
        #expect(throws: ProviderError.self) {
            try ProviderOptions([Option(name: "colour", value: "red", required: true)], accepted: ["device"])
        }
        // sk_sign takes no user: passed as required there, it is refused too.
        #expect(throws: ProviderError.self) {
            try ProviderOptions([Option(name: "user", value: "alice", required: true)], accepted: ["device"])
        }
        let options = try ProviderOptions([Option(name: "colour", value: "red", required: false)], accepted: ["device"])
        #expect(options.device == nil && options.user == nil)
    }
}
