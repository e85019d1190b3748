/// Standard base64 with padding (RFC 4648 §4), as fido2-tools and pam_u2f's
/// authfiles read and write it; the protocol's base64url is the same code
/// with two other characters and no padding.
public enum Base64 {
    public static func encode(_ bytes: [UInt8]) -> String {
        var text = Base64URL.encode(bytes).map { character -> Character in
            switch character {
            case "-": return "+"
            case "_": return "/"
            default: return character
            }
        }
        while text.count % 4 != 0 { text.append("=") }
        return String(text)
    }

    /// nil for anything that is not base64 (either alphabet; padding optional).
    public static func decode(_ text: String) -> [UInt8]? { Base64URL.decode(text) }
}
