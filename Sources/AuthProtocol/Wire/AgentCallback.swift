/// An agent's callback (authkeyd-protocol(7), "Agents"): an abstract Unix
/// socket the agent listens on, as polkit's agents wait on the bus for
/// the authority's call, so that its connection need not keep a
/// socket-activated daemon running. The rules here are the daemon's and
/// the agent's both: the agent makes a name and a token that pass them,
/// and the daemon refuses any that does not.
///
/// An abstract socket has no file and no permissions: anyone may bind a
/// free name, or connect to a bound one. So each side checks the other.
/// The daemon connects only to a socket bound by the registered user
/// (`SO_PEERCRED`); the agent takes a connection for the daemon's only
/// when its first line carries the token it registered, which only the
/// daemon (it keeps it in its state directory) and the agent know.
public enum AgentCallback {
    /// Every callback name starts so, to say whose socket it is, and so
    /// that the daemon can be pointed at no other abstract socket.
    public static let namePrefix = "authkeyd-agent."
    /// The longest name: well within the 107 bytes `sockaddr_un` holds
    /// after the abstract namespace's leading NUL.
    public static let maxNameLength = 100
    /// A token is this many lowercase hexadecimal digits (32 random bytes).
    public static let tokenLength = 64

    /// Why `name` cannot be a callback, or nil when it can: the prefix,
    /// then letters, digits, `.`, `_` and `-`, at most `maxNameLength`
    /// bytes in all.
    public static func problem(withName name: String) -> String? {
        let bytes = Array(name.utf8)
        guard name.hasPrefix(namePrefix), bytes.count > namePrefix.utf8.count else {
            return "a callback name is \"\(namePrefix)\" followed by letters, digits, '.', '_' or '-'"
        }
        guard bytes.count <= maxNameLength else { return "a callback name has at most \(maxNameLength) bytes, not \(bytes.count)" }
        guard bytes.allSatisfy(isNameByte) else {
            return "a callback name has only letters, digits, '.', '_' and '-' after \"\(namePrefix)\""
        }
        return nil
    }

    /// Why `token` cannot be a callback's token, or nil when it can. The
    /// message never repeats the token.
    public static func problem(withToken token: String) -> String? {
        let bytes = Array(token.utf8)
        guard bytes.count == tokenLength, bytes.allSatisfy(isLowercaseHexDigit) else {
            return "a callback token is \(tokenLength) lowercase hexadecimal digits"
        }
        return nil
    }

    /// Whether two tokens are the same, in time that depends only on
    /// their lengths: how long a wrong guess takes tells nothing of the
    /// right one.
    public static func tokensMatch(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8), b = Array(expected.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// A token from `bytes` random bytes: their lowercase hexadecimal digits.
    public static func token(from bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    private static func isLowercaseHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
