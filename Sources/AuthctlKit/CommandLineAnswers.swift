/// The answers to the daemon's prompts given on the command line, for
/// scripts: `--authenticator`, `--pin-fd`, `--name`, `--yes` / `--no`,
/// `--user`.
/// Where one is given it is used, terminal or not.
struct CommandLineAnswers: Sendable {
    /// The key to use; the daemon then asks no selection.
    var authenticator: String?
    var pins: PINFile?
    /// The name for the key just registered.
    var friendlyName: String?
    /// `--yes` true, `--no` false, neither nil.
    var confirmation: Bool?
    /// `authctl assert --user`: the account (user name) to use when the key
    /// holds several (set by assert only: register's --user names the new one).
    var userName: String?

    init(_ arguments: Arguments) throws(UsageError) {
        authenticator = arguments.options["authenticator"]
        pins = try arguments.options["pin-fd"].map { text throws(UsageError) in try PINFile(text) }
        friendlyName = arguments.options["name"]
        switch (arguments.flags.contains("yes"), arguments.flags.contains("no")) {
        case (true, true): throw UsageError("--yes and --no contradict each other")
        case (true, false): confirmation = true
        case (false, true): confirmation = false
        case (false, false): confirmation = nil
        }
    }
}
