import PAMAuthFile

/// What one use of a credential demands, from its line's options and the
/// module's, with pam_u2f's precedence: `userpresence=1` or the line's
/// `+presence` demands a touch; `userpresence=0` lifts it only where the
/// line does not ask for it; otherwise the key does what it does by
/// default (a touch). The same for verification and the PIN.
public struct Requirements: Sendable, Equatable {
    public enum Demand: Sendable, Equatable {
        /// Demanded, and checked in the signed flags.
        case required
        /// Switched off.
        case off
        /// Left to the key's default; not checked.
        case unset
    }

    public var presence: Demand
    public var verification: Demand
    public var pin: Demand

    public init(presence: Demand, verification: Demand, pin: Demand) {
        self.presence = presence
        self.verification = verification
        self.pin = pin
    }

    public init(_ credential: EnrolledCredential.Options, _ options: ModuleOptions) {
        presence = Self.demand(credential.presence, options.userPresence)
        verification = Self.demand(credential.verification, options.userVerification)
        pin = Self.demand(credential.pin, options.pinVerification)
    }

    /// The key must verify the user: with its PIN or a fingerprint (the
    /// daemon asks for the PIN where the key has no fingerprint sensor).
    /// Either sets the UV flag that is then checked.
    public var verifiesUser: Bool { verification == .required || pin == .required }

    private static func demand(_ asked: Bool, _ option: ModuleOptions.Requirement) -> Demand {
        if asked || option == .on { return .required }
        return option == .off ? .off : .unset
    }
}
