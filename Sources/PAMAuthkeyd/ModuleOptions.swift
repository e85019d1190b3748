/// The arguments of the module's line in /etc/pam.d, with pam_u2f's names
/// and meanings where pam_u2f has them (pam_authkeyd(8)), so that
/// switching from pam_u2f is a change of the module's name.
public struct ModuleOptions: Sendable, Equatable {
    /// A requirement an option may force on or off for every credential
    /// (`userpresence=1`); unset leaves it to each credential's own
    /// `+presence`, `+verification`, `+pin`.
    public enum Requirement: Sendable, Equatable {
        case unset
        case on
        case off
    }

    /// `authfile=`: absolute, or relative to the user's home directory.
    public var authFile: String?
    /// `origin=`: the relying party id; default `pam://` + the host name.
    public var origin: String?
    /// `appid=`: accepted for pam_u2f's lines; pam_u2f 1.1 uses it for nothing either.
    public var appID: String?
    /// `cue`: tell the user to touch the key (`PAM_TEXT_INFO`).
    public var cue = false
    /// `cue_prompt=`: the cue's text.
    public var cuePrompt: String?
    /// `nouserok`: a user with no credential is not this module's business (`PAM_IGNORE`).
    public var noUserOK = false
    public var userPresence = Requirement.unset
    public var userVerification = Requirement.unset
    public var pinVerification = Requirement.unset
    /// `debug`: each step to syslog (`LOG_AUTHPRIV`, `LOG_DEBUG`).
    public var debug = false
    /// `debug_file=`: an existing file the log goes to as well (appended,
    /// never created, not through a link); syslog otherwise.
    public var debugFile: String?
    /// `socket=`: the daemon's socket. Never taken from the environment:
    /// the module runs inside setuid programs.
    public var socket: String?
    /// `openasuser`: read an absolute `authfile=` with the user's
    /// privileges too (the default path always is).
    public var openAsUser = false
    /// `max_devices=`: at most this many credentials of a line are used.
    public var maxDevices = 24
    /// Arguments the module does not know, to be logged.
    public var unknown: [String] = []

    public static let defaultSocket = "/run/authkeyd/authkeyd.sock"

    public init(arguments: [String]) {
        for argument in arguments {
            let (name, value) = Self.split(argument)
            switch (name, value) {
            case ("authfile", let value?): authFile = value
            case ("origin", let value?): origin = value
            case ("appid", let value?): appID = value
            case ("cue", nil): cue = true
            case ("cue_prompt", let value?): cuePrompt = value
            case ("nouserok", nil): noUserOK = true
            case ("userpresence", let value?): userPresence = Self.requirement(value)
            case ("userverification", let value?): userVerification = Self.requirement(value)
            case ("pinverification", let value?): pinVerification = Self.requirement(value)
            case ("debug", nil): debug = true
            case ("debug_file", let value?): debugFile = value
            case ("socket", let value?): socket = value
            case ("openasuser", _): openAsUser = true
            case ("max_devices", let value?):
                // pam_u2f: 0 means the default.
                if let count = Int(value), count >= 0 { maxDevices = count == 0 ? 24 : count } else { unknown.append(argument) }
            default: unknown.append(argument)
            }
        }
    }

    public var socketPath: String { socket ?? Self.defaultSocket }

    /// The relying party id credentials are asserted for.
    public func relyingParty(hostName: String) -> String { origin ?? "pam://\(hostName)" }

    private static func split(_ argument: String) -> (String, String?) {
        guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// pam_u2f reads these as integers: 1 forces a requirement, 0 lifts it
    /// where the credential does not ask for it, anything else leaves it.
    private static func requirement(_ value: String) -> Requirement {
        switch Int(value) {
        case 1?: return .on
        case 0?: return .off
        default: return .unset
        }
    }
}
