/// An ISO 7816-4 command APDU, as U2F hosts send one in a CTAPHID_MSG
/// (FIDO U2F Raw Message Formats §2): libfido2 uses the extended encoding
/// (`CLA INS P1 P2 00 Lc1 Lc2 data Le1 Le2`), other hosts the short one.
struct CommandAPDU: Equatable {
    var cla: UInt8
    var ins: UInt8
    var p1: UInt8
    var p2: UInt8
    var data: [UInt8]
    /// Ne, the most response bytes the host takes; nil when Le is absent.
    /// Over HID a U2F key sends its whole response whatever Le says, as
    /// real keys do, so this is parsed for the length check only.
    var maxResponseLength: Int?

    /// Parses the seven encodings (cases 1, 2S, 3S, 4S, 2E, 3E, 4E);
    /// anything else is `wrongLength`.
    init(_ bytes: [UInt8]) throws(StatusWord) {
        guard bytes.count >= 4 else { throw .wrongLength }
        cla = bytes[0]
        ins = bytes[1]
        p1 = bytes[2]
        p2 = bytes[3]
        let body = Array(bytes.dropFirst(4))
        switch body.count {
        case 0:
            data = []
        case 1:
            data = []
            maxResponseLength = body[0] == 0 ? 256 : Int(body[0])
        default:
            if body[0] != 0 {
                // Short: Lc (1..255), the data, and maybe Le (1 byte).
                let count = Int(body[0])
                data = Array(body.dropFirst().prefix(count))
                switch body.count - 1 - count {
                case 0: break
                case 1: maxResponseLength = body[body.count - 1] == 0 ? 256 : Int(body[body.count - 1])
                default: throw .wrongLength
                }
            } else {
                // Extended: a zero byte, then Lc (2 bytes) and the data,
                // or Le (2 bytes) alone.
                guard body.count >= 3 else { throw .wrongLength }
                let first = Int(body[1]) << 8 | Int(body[2])
                if body.count == 3 {
                    data = []
                    maxResponseLength = first == 0 ? 65536 : first
                } else {
                    guard first > 0 else { throw .wrongLength }
                    data = Array(body.dropFirst(3).prefix(first))
                    switch body.count - 3 - first {
                    case 0: break
                    case 2:
                        let le = Int(body[body.count - 2]) << 8 | Int(body[body.count - 1])
                        maxResponseLength = le == 0 ? 65536 : le
                    default: throw .wrongLength
                    }
                }
            }
        }
    }
}

/// The status word that ends every response APDU (ISO 7816-4 §5.1.3, and
/// the ones FIDO U2F Raw Message Formats §3.3 names).
enum StatusWord: UInt16, Error, Sendable {
    case noError = 0x9000
    /// No touch yet (the host polls until it stops getting this), or, for
    /// a check-only AUTHENTICATE, "this key handle is mine".
    case conditionsNotSatisfied = 0x6985
    /// A key handle this key did not issue for the application.
    case wrongData = 0x6A80
    case wrongLength = 0x6700
    case insNotSupported = 0x6D00
    case claNotSupported = 0x6E00
    /// The key failed inside (its state file could not be written).
    case noPreciseDiagnosis = 0x6F00

    var bytes: [UInt8] { [UInt8(rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)] }
}
