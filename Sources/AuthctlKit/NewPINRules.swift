/// What CTAP lets a new PIN be: at least the key's minimum length in
/// characters (never under 4), at most 63 bytes of UTF-8. authkeyd checks
/// the same before the key does and asks again (`newRejected`); authctl
/// checks it too, to say at once what was wrong with what was typed.
struct NewPINRules: Sendable {
    static let floor = 4
    static let maximumBytes = 63

    let minimumLength: Int

    /// `keyMinimum` is the key's minPinLength (getInfo), when known.
    init(keyMinimum: Int?) {
        minimumLength = max(Self.floor, keyMinimum ?? Self.floor)
    }

    /// What keeps a PIN of this length out; nil when the length is fine.
    /// Characters as CTAP counts them: Unicode code points.
    func problem(characters: Int, bytes: Int) -> String? {
        if characters < minimumLength { return "too short: at least \(minimumLength) characters" }
        if bytes > Self.maximumBytes { return "too long: at most \(Self.maximumBytes) bytes" }
        return nil
    }

    func problem(with pin: String) -> String? {
        problem(characters: pin.unicodeScalars.count, bytes: pin.utf8.count)
    }
}
