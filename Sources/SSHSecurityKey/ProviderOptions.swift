/// The options OpenSSH passes (`struct sk_option`): `device` and `user` are
/// the names it uses. An unknown option it marks required is an error, as
/// OpenSSH's own middleware has it; an unknown optional one is ignored.
public struct ProviderOptions: Sendable, Equatable {
    /// `-O device=`: an authkeyd key id or a hidraw path (`authctl list`).
    public var device: String?
    /// `-O user=`: the user id of an enrolled key, at most 31 bytes.
    public var user: String?

    public struct Option: Sendable {
        public var name: String
        public var value: String
        public var required: Bool
        public init(name: String, value: String, required: Bool) {
            self.name = name
            self.value = value
            self.required = required
        }
    }

    /// - Parameter accepted: the names the call takes (`user` only at enroll).
    public init(_ options: [Option], accepted: Set<String>) throws(ProviderError) {
        for option in options {
            switch option.name {
            case "device" where accepted.contains("device"): device = option.value
            case "user" where accepted.contains("user"): user = option.value
            default:
                if option.required {
                    throw ProviderError(.unsupported, "the option \"\(option.name)\" is not supported by this provider")
                }
            }
        }
    }

    /// The user id OpenSSH's own middleware enrolls with: the `user` option
    /// in 32 bytes, zero-padded (zeros without one), so that a resident key
    /// made through authkeyd and one made by ssh directly are the same
    /// key for `-O user=`, and each is found as existing by the other.
    public func userID() throws(ProviderError) -> [UInt8] {
        let bytes = Array((user ?? "").utf8)
        guard bytes.count < Self.userIDLength else {
            throw ProviderError(.general, "the user \"\(user ?? "")\" is too long: at most \(Self.userIDLength - 1) bytes")
        }
        return bytes + [UInt8](repeating: 0, count: Self.userIDLength - bytes.count)
    }

    static let userIDLength = 32
}
