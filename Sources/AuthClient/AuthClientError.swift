import AuthProtocol
import SystemKit

/// Why a call to the daemon did not give a result.
public enum AuthClientError: Error, CustomStringConvertible, Sendable {
    /// The socket could not be reached: the daemon is probably not running.
    case cannotConnect(path: String, SystemError)
    /// The daemon answered with an error; `reason` tells which.
    case daemon(RPCError)
    /// The connection ended before the answer came.
    case disconnected
    /// The daemon sent something this client cannot read.
    case protocolViolation(String)
    /// The daemon said nothing for this long, though it owed an answer
    /// (`AuthClient.givingUpIfSilent`): stopped or deadlocked, it is as
    /// good as absent.
    case notAnswering(Duration)

    public var description: String {
        switch self {
        case .cannotConnect(let path, let error):
            return "cannot connect to \(path) (\(error)): is authkeyd running? try: systemctl start authkeyd.socket"
        case .daemon(let error): return error.message
        case .disconnected: return "the connection to authkeyd closed"
        case .protocolViolation(let what): return "unexpected reply from authkeyd: \(what)"
        case .notAnswering(let limit): return "authkeyd did not answer for \(limit) (is it stopped or stuck?)"
        }
    }

    /// The stable reason word, when the daemon gave one.
    public var reason: ErrorReason? {
        if case .daemon(let error) = self { return error.reason }
        return nil
    }
}
