import AuthClient
import AuthProtocol

/// A failure as OpenSSH's middleware API reports it: one of its codes and,
/// where there is something to say, the reason, which the C entry points
/// write to stderr, where ssh shows it.
public struct ProviderError: Error, Sendable {
    /// `SSH_SK_ERR_*`.
    public enum Code: Int32, Sendable {
        case general = -1
        case unsupported = -2
        /// ssh asks the user for the PIN and calls again with it.
        case pinRequired = -3
        case deviceNotFound = -4
        case credentialExists = -5
    }

    public var code: Code
    /// Nil where OpenSSH says it all itself ("Enter PIN for …").
    public var message: String?

    public init(_ code: Code, _ message: String?) {
        self.code = code
        self.message = message
    }

    static func pinRequired() -> ProviderError { ProviderError(.pinRequired, nil) }
}

extension ProviderError {
    /// A failed call to the daemon, while `activity`.
    init(_ error: AuthClientError, while activity: String) {
        switch error {
        case .cannotConnect, .notAnswering:
            // Not running, or stopped or stuck: as good as absent, so that
            // ssh goes on without the key instead of hanging.
            self.init(.deviceNotFound, "\(activity): \(error)")
        case .disconnected:
            self.init(.general, "\(activity): authkeyd closed the connection (was it stopped?)")
        case .protocolViolation:
            self.init(.general, "\(activity): \(error)")
        case .daemon(let failure):
            self.init(Self.code(for: failure.reason), "\(activity): \(failure.message)")
        }
    }

    /// The daemon's reasons, as OpenSSH's codes. `pinRequired` is left to
    /// the prompts, which know whether a PIN was given and refused.
    static func code(for reason: ErrorReason?) -> Code {
        switch reason {
        case .noAuthenticator?, .noCredentials?: return .deviceNotFound
        case .credentialExcluded?: return .credentialExists
        case .unsupported?: return .unsupported
        case .pinRequired?, .pinInvalid?: return .pinRequired
        default: return .general
        }
    }
}
