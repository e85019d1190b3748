import AuthProtocol

/// How an agent names a request to its user: which program asks, and for
/// what. The terminal and the desktop agents say it the same way.
enum RequestWording {
    /// "python3 (pid 4242, uid 1000)": the program, as the kernel names it.
    static func who(_ requester: Requester?) -> String {
        guard let requester else { return "a program" }
        let client = requester.client.map { ", \(printable($0))" } ?? ""
        return "\(printable(requester.command)) (pid \(requester.pid), uid \(requester.uid)\(client))"
    }

    /// "register at example.org as alice", "sign in to example.org", …
    static func purpose(of operation: OperationInfo) -> String {
        let site = printable(operation.rpId ?? "a site")
        let user = operation.userName.map { " as \(printable($0))" } ?? ""
        switch operation.type {
        case .registration: return "register at \(site)\(user)"
        case .authentication: return "sign in to \(site)\(user)"
        case .management: return "manage the key (\(printable(operation.action ?? "management")))"
        }
    }

    /// "python3 (pid 4242, uid 1000) wants to sign in to example.org".
    static func sentence(_ operation: OperationInfo) -> String {
        "\(who(operation.requester)) wants to \(purpose(of: operation))"
    }
}
