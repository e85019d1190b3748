import PAMAuthFile

/// The `pamauthfile` target: bytes as a pam_u2f authfile (what
/// pam_authkeyd reads from a user's home, and `authctl pam register`
/// rewrites), read for each user its lines name.
///
/// Nothing may crash, and these must hold for each user read without error:
/// - the credentials found, written back as a line (`AuthFile.line`, what
///   `pamu2fcfg` and `authctl pam register --print` print), read back the same;
/// - the file with a credential added for the user (`AuthFile.adding`, what
///   `authctl pam register` writes) holds the user's credentials as before
///   and the new one after them.
public func fuzzPAMAuthFile(_ data: [UInt8]) {
    for user in users(named: data) {
        let found: [EnrolledCredential]?
        do {
            found = try AuthFile.credentials(of: user, in: data)
        } catch {
            FuzzTrace.log("\(user): \(error)")
            continue
        }
        FuzzTrace.log("\(user): \(found.map { "\($0.count) credentials" } ?? "no line")")
        if let found {
            checkLineRoundTrip(user, found)
        }
        checkAdding(user, to: data, found: found ?? [])
    }
}

/// pam_u2f's limit, and `AuthFile.credentials`' default.
private let maxDevices = 24

/// The users the file's lines name (each line's first field, as
/// `AuthFile` reads it), a few at most, and one it does not.
private func users(named data: [UInt8]) -> [String] {
    var users: [String] = []
    for line in data.split(separator: 0x0A).prefix(8) {
        var text = String(decoding: line, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        if let first = text.split(separator: ":").first.map(String.init), !users.contains(first) { users.append(first) }
    }
    return users + ["nobody-in-the-file"]
}

private func checkLineRoundTrip(_ user: String, _ found: [EnrolledCredential]) {
    // A user alone on a line ending in CR: the CR is the line's end, not the name's.
    guard !(found.isEmpty && user.hasSuffix("\r")) else { return }
    let line = AuthFile.line(for: user, found)
    require(!line.utf8.contains(0x0A), "the line for \(user) holds a line feed")
    let again = try? AuthFile.credentials(of: user, in: Array(line.utf8))
    require(again == found, "\(user)'s credentials read back differently from \(line)")
}

/// What `authctl pam register` adds: a credential of each kind in turn.
private let added: [EnrolledCredential] = [
    EnrolledCredential(
        keyHandle: .id([UInt8](repeating: 0xA5, count: 48)), publicKey: [UInt8](repeating: 0x11, count: 64), algorithm: .es256,
        options: .init(presence: true)),
    EnrolledCredential(keyHandle: .resident, publicKey: [UInt8](repeating: 0x22, count: 32), algorithm: .eddsa, options: .init()),
]

private func checkAdding(_ user: String, to data: [UInt8], found: [EnrolledCredential]) {
    // Past pam_u2f's limit the new credential would not count.
    guard found.count < maxDevices else { return }
    let credential = added[data.count % added.count]
    let written = AuthFile.adding(credential, for: user, to: data)
    guard written.count <= AuthFile.maximumSize else { return }
    let after = try? AuthFile.credentials(of: user, in: written, maxDevices: maxDevices)
    require(
        after == found + [credential],
        "adding a credential for \(user) to \(found.count) left \(after.map { "\($0.count), the last \($0.last == credential ? "" : "not ")the one added" } ?? "no line")")
}
