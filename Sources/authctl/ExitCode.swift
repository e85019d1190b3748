import AuthClient
import AuthProtocol
import Glibc
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

/// Prints the message to standard error and exits with the code.
func fail(_ message: String, _ code: ExitCode) -> Never {
    printError(message)
    exit(code.rawValue)
}

func fail(_ error: AuthClientError) -> Never {
    exit(report(error).rawValue)
}

/// Prints the error's message to standard error; the code to exit with.
func report(_ error: AuthClientError) -> ExitCode {
    printError(error.description)
    return ExitCode(error)
}

private func printError(_ message: String) {
    writeToStandardError("authctl: \(message)\n")
}
