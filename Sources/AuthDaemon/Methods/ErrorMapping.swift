import AuthProtocol
import FIDO2

extension RPCError {
    /// The protocol's reason for a libfido2 error, with libfido2's name in
    /// `data.fido` so that nothing is lost on the way.
    init(_ error: FIDO2Error, doing activity: String) {
        let reason: ErrorReason
        let explanation: String
        switch error {
        case .keepaliveCancel:
            (reason, explanation) = (.cancelled, "the key stopped waiting (cancelled)")
        case .actionTimeout, .userActionTimeout, .timeout:
            (reason, explanation) = (.timeout, "nobody touched the key in time")
        case .rx, .tx:
            (reason, explanation) = (.deviceError, "the key did not answer (unplugged, or not responding)")
        case .pinRequired:
            (reason, explanation) = (.pinRequired, "the key needs its PIN")
        case .pinInvalid:
            (reason, explanation) = (.pinInvalid, "wrong PIN")
        case .pinBlocked:
            (reason, explanation) = (.pinBlocked, "the PIN is blocked; only a reset of the key clears it")
        case .pinAuthBlocked:
            (reason, explanation) = (.pinBlocked, "too many wrong PINs in a row; unplug the key and plug it back in")
        case .uvInvalid:
            (reason, explanation) = (.deviceError, "the fingerprint was not recognised")
        case .uvBlocked:
            (reason, explanation) = (.uvBlocked, "fingerprint verification is blocked; use the PIN")
        case .noCredentials:
            (reason, explanation) = (.noCredentials, "the key holds no matching credential")
        case .credentialExcluded:
            (reason, explanation) = (.credentialExcluded, "the key is already registered with this account")
        case .operationDenied, .notAllowed:
            (reason, explanation) = (.cancelled, "the key refused")
        case .unsupportedAlgorithm, .unsupportedOption, .unsupportedExtension, .invalidCommand:
            (reason, explanation) = (.unsupported, "the key does not support this")
        case .channelBusy:
            (reason, explanation) = (.busy, "the key is busy with another program")
        default:
            (reason, explanation) = (.deviceError, "the key reported an error")
        }
        self.init(reason, "\(activity): \(explanation) (\(error.name))", details: ["fido": .string(error.name)])
    }
}
