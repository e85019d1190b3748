import AuthClient
import AuthProtocol
import SystemKit

/// authctl's exit codes, by kind of failure (sysexits.h where one fits).
enum ExitCode: Int32 {
    case success = 0
    /// The operation failed: wrong PIN, no credential, the key refused…
    case failure = 1
    /// The user (or the other side) cancelled.
    case cancelled = 2
    /// EX_USAGE: the command line is wrong.
    case usage = 64
    /// EX_UNAVAILABLE: authkeyd is not running, or the key is gone.
    case unavailable = 69
    /// EX_SOFTWARE: authkeyd said something unexpected.
    case software = 70
    /// EX_TEMPFAIL: a timeout, or busy: try again.
    case temporary = 75
    /// EX_NOPERM: authkeyd does not let this user do that.
    case permissionDenied = 77

    init(_ error: AuthClientError) {
        switch error {
        case .cannotConnect, .disconnected, .notAnswering: self = .unavailable
        case .protocolViolation: self = .software
        case .daemon(let rpc):
            switch rpc.reason {
            case .permissionDenied?: self = .permissionDenied
            case .cancelled?: self = .cancelled
            case .timeout?, .busy?, .shuttingDown?: self = .temporary
            case .noAuthenticator?: self = .unavailable
            case .invalidParams?, .methodNotFound?, .parseError?, .invalidRequest?, .internalError?, .tooLarge?: self = .software
            default: self = .failure
            }
        }
    }
}

/// authctl stopping for a reason of its own, not the daemon's: what it
/// says on standard error, and the exit code.
struct Stop: Error {
    let message: String
    let code: ExitCode

    init(_ message: String, _ code: ExitCode) {
        self.message = message
        self.code = code
    }
}

/// Prints why the run failed to standard error; the code to exit with. A
/// usage error shows the usage after it.
func report(_ error: any Error, to console: Console) -> ExitCode {
    let (message, code): (String, ExitCode)
    switch error {
    case let error as AuthClientError: (message, code) = (error.description, ExitCode(error))
    case let stop as Stop: (message, code) = (stop.message, stop.code)
    case let error as UsageError: (message, code) = ("\(error)\n\n\(usage)", .usage)
    default: (message, code) = ("\(error)", .failure)
    }
    console.output.writeError("authctl: \(message)\n")
    return code
}
