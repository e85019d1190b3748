/// What a key's getInfo options say, by name instead of by CTAP string.
///
/// CTAP gives many options three states: absent (the key lacks the
/// feature), `false` (it has it, not set up or not on) and `true`. The
/// daemon reads them only through these members, so a misspelt option name
/// is a compile error, not a feature that silently looks missing.
extension AuthenticatorInfo {
    /// One getInfo option: absent, `false` or `true`.
    public enum OptionState: Sendable, Equatable {
        /// The key does not report the option: it lacks the feature.
        case absent
        /// The key has the feature, not set up or switched off (`false`).
        case off
        /// The key has the feature, set up or switched on (`true`).
        case on

        init(_ value: Bool?) {
            switch value {
            case nil: self = .absent
            case false?: self = .off
            case true?: self = .on
            }
        }

        /// The key has the feature (the option is present, whatever its value).
        public var isSupported: Bool { self != .absent }
        /// The option is `true`.
        public var isOn: Bool { self == .on }
    }

    /// The getInfo options, typed; `options` keeps them as the key sent them.
    public struct Supports: Sendable, Equatable {
        let options: [String: Bool]

        /// `rk`: the key stores discoverable (resident) credentials.
        public var residentKeys: Bool { options["rk"] == true }
        /// `clientPin`: absent without PIN support, `off` while no PIN is set.
        public var clientPIN: OptionState { OptionState(options["clientPin"]) }
        /// `uv`: built-in user verification; `off` while none is enrolled.
        public var userVerification: OptionState { OptionState(options["uv"]) }
        /// `pinUvAuthToken`: the key hands out PIN/UV auth tokens (CTAP 2.1).
        public var pinUVAuthToken: Bool { options["pinUvAuthToken"] == true }
        /// `credMgmt`, or CTAP 2.1's preview `credentialMgmtPreview`.
        public var credentialManagement: Bool {
            options["credMgmt"] == true || options["credentialMgmtPreview"] == true
        }
        /// `bioEnroll`, or the preview `userVerificationMgmtPreview`: fingerprint enrollment.
        public var bioEnrollment: OptionState {
            OptionState(options["bioEnroll"] ?? options["userVerificationMgmtPreview"])
        }
        /// `alwaysUv`: absent when the key cannot require UV always.
        public var alwaysUV: OptionState { OptionState(options["alwaysUv"]) }
        /// `authnrCfg`: the key takes authenticatorConfig commands.
        public var authenticatorConfig: Bool { options["authnrCfg"] == true }
        /// `setMinPINLength`: the minimum PIN length can be raised.
        public var setMinPINLength: Bool { options["setMinPINLength"] == true }
        /// `largeBlobs`: the key keeps a large-blob array.
        public var largeBlobs: Bool { options["largeBlobs"] == true }
    }

    /// The getInfo options, typed (`info.supports.clientPIN`).
    public var supports: Supports { Supports(options: options) }
}
