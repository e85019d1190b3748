import AuthProtocol

/// Standard base64 with padding (RFC 4648 §4), as fido2-tools read and
/// print it; the protocol's base64url is the same code with two other
/// characters and no padding.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
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
}
