import AuthctlKit
import Testing

/// authctl's command line before it connects: help, version, and every
/// usage error (exit 64, EX_USAGE), which needs no daemon.
@Suite struct UsageTests {
    @Test func helpPrintsTheUsageAndExitsZero() async {
        for arguments in [["--help"], ["-h"]] {
            let shown = await authctl(arguments)
            #expect(shown.status == 0, "\(arguments): \(shown)")
            #expect(shown.output.hasPrefix("Usage: authctl [--socket PATH] [--json] COMMAND [ARGUMENTS]\n"), "\(shown)")
            #expect(shown.output.hasSuffix("77 permission denied.\n"), "\(shown)")
            #expect(shown.errors.isEmpty)
        }
    }

    /// `--help` wins over whatever else the line holds, even what is wrong
    /// with it: every subcommand shows the usage, and nothing connects.
    @Test(arguments: [
        "list", "info", "watch", "select", "register", "assert", "registrations", "agent", "pam", "pin", "reset",
        "credentials", "fingerprints", "config",
    ])
    func helpOfEverySubcommand(_ command: String) async {
        let usage = await usageText()
        let shown = await authctl([command, "--help"])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.output == usage)
        #expect(shown.errors.isEmpty)
        #expect(await authctl([command, "an-operand", "--help", "--bogus-is-not-read"]).status == 64, "an unknown option is found first")
        #expect(await authctl(["--help", command, "an-operand"]).output == usage)
    }

    @Test func versionNamesTheProtocol() async {
        let shown = await authctl(["--version"])
        #expect(shown.status == 0)
        #expect(shown.output == "authctl 0.1.0 (protocol 1)\n")
        #expect(shown.errors.isEmpty)
    }

    /// Each wrong command line: its message, then the usage, on standard
    /// error; nothing on standard output; exit 64; no connection (the
    /// socket named does not exist, and a connection would say so).
    @Test(arguments: [
        ([], "no command given"),
        (["bogus"], "unknown command 'bogus'"),
        (["list", "--bogus"], "unknown option --bogus"),
        (["list", "--json=yes"], "--json takes no value"),
        (["register", "--rp"], "--rp needs a value"),
        (["list", "extra"], "list takes no operands"),
        (["info"], "info takes a key ID (see authctl list)"),
        (["info", "v1", "v2"], "info takes a key ID (see authctl list)"),
        (["list", "--rp", "example.org"], "list does not take --rp"),
        (["watch", "--timeout", "5"], "watch does not take --timeout"),
        (["select", "--timeout", "0"], "--timeout takes seconds, such as 30"),
        (["select", "--timeout", "soon"], "--timeout takes seconds, such as 30"),
        (["register", "--user", "alice"], "--rp is required"),
        (["register", "--rp", "example.org"], "--user is required"),
        (["register", "--rp", "example.org", "--user", "alice", "extra"], "register takes no operands"),
        (["register", "--rp", "example.org", "--user", "alice", "--user", "bob"], "--user given twice"),
        (["register", "--rp", "example.org", "--user", "alice", "--uv", "sometimes"], "--uv takes required, preferred, discouraged"),
        (["register", "--rp", "example.org", "--user", "alice", "--attestation", "indirect"], "--attestation takes none, direct"),
        (["register", "--rp", "example.org", "--user", "alice", "--algorithm", "rsa"],
         "--algorithm takes es256, eddsa or rs256, or several joined by commas, most preferred first"),
        (["register", "--rp", "example.org", "--user", "alice", "--algorithm", "eddsa,es256,EdDSA"], "--algorithm names EdDSA twice"),
        (["register", "--rp", "example.org", "--user", "alice", "--challenge", "AAAA"], "--challenge takes at least 16 bytes, in base64url"),
        (["register", "--rp", "example.org", "--user", "alice", "--challenge", "!!"], "--challenge takes base64url"),
        (["register", "--rp", "example.org", "--user", "alice", "--user-id", "!!"], "--user-id takes base64url"),
        (["register", "--rp", "example.org", "--user", "alice", "--json", "--format", "fido2-tools"],
         "--json and --format fido2-tools are two different outputs: choose one"),
        (["register", "--rp", "example.org", "--user", "alice", "--format", "cbor"], "--format takes fido2-tools"),
        (["register", "--rp", "example.org", "--user", "alice", "--yes", "--no"], "--yes and --no contradict each other"),
        (["register", "--rp", "example.org", "--user", "alice", "--pin-fd", "4096"], "--pin-fd 4096: not an open file descriptor"),
        (["register", "--rp", "example.org", "--user", "alice", "--transaction", "A=1"], "register does not take --transaction"),
        (["assert"], "--rp is required"),
        (["assert", "--rp", "example.org", "--rp", "example.com"], "--rp given twice"),
        (["assert", "--rp", "example.org", "--resident"], "assert does not take --resident"),
        (["assert", "--rp", "example.org", "--credential", "!"], "--credential takes a base64url credential id"),
        (["assert", "--rp", "example.org", "--transaction", "=10"], "--transaction takes Label=Value, such as Amount=10"),
        (["assert", "--rp", "example.org", "--transaction", "Amount"], "--transaction takes Label=Value, such as Amount=10"),
        (["assert", "--rp", "example.org", "--transaction", "A=1", "--transaction", "A=2"], "--transaction A given twice"),
        (["registrations"], "registrations takes: list, rename ID NAME, or delete ID"),
        (["registrations", "rename", "AAAA"], "registrations takes: list, rename ID NAME, or delete ID"),
        (["registrations", "delete"], "registrations takes: list, rename ID NAME, or delete ID"),
        (["registrations", "list", "--rp", "example.org"], "registrations does not take --rp"),
        (["pam"], "pam takes register [OPTIONS] or list [--origin ORIGIN] [--authfile PATH]"),
        (["pam", "list", "extra"], "pam takes register [OPTIONS] or list [--origin ORIGIN] [--authfile PATH]"),
        (["pam", "list", "--resident"], "pam list does not take --resident"),
        (["pam", "register", "--rp", "example.org"], "pam register does not take --rp"),
        (["pam", "register", "--algorithm", "ecdsa"],
         "--algorithm takes es256, eddsa or rs256, or several joined by commas, most preferred first"),
        (["pam", "register", "--timeout", "-1"], "--timeout takes seconds, such as 30"),
        (["pam", "register", "--origin", "pam://a", "--origin", "pam://b"], "--origin given twice"),
        (["pin"], "pin takes: set ID, change ID, or retries ID"),
        (["pin", "set"], "pin takes: set ID, change ID, or retries ID"),
        (["pin", "forget", "v1"], "pin takes: set ID, change ID, or retries ID"),
        (["pin", "set", "v1", "--rp", "example.org"], "pin set does not take --rp"),
        (["reset"], "reset takes a key ID (see authctl list)"),
        (["reset", "v1", "--yes"], "reset does not take --yes"),
        (["credentials", "list"],
         "credentials takes: list ID [--rp RPID], delete ID CREDENTIAL, or update ID CREDENTIAL [--user NAME] [--display-name TEXT]"),
        (["credentials", "delete", "v1"],
         "credentials takes: list ID [--rp RPID], delete ID CREDENTIAL, or update ID CREDENTIAL [--user NAME] [--display-name TEXT]"),
        (["credentials", "delete", "v1", "AAAAAAAA", "--user", "bob"], "credentials delete does not take --user"),
        (["credentials", "update", "v1", "AAAAAAAA"], "credentials update takes --user NAME, --display-name TEXT, or both"),
        (["fingerprints", "rename", "v1", "AQ"],
         "fingerprints takes: info ID, list ID, enroll ID [--name TEXT], rename ID TEMPLATE NAME, or delete ID TEMPLATE"),
        (["fingerprints", "list", "v1", "--name", "thumb"], "fingerprints list does not take --name"),
        (["config", "always-uv", "v1", "maybe"], "config always-uv takes on or off"),
        (["config", "min-pin-length", "v1", "3"], "config min-pin-length takes a length from 4 to 63"),
        (["config", "min-pin-length", "v1", "six"], "config min-pin-length takes a length from 4 to 63"),
        (["config", "always-uv", "v1", "on", "--rp", "example.org"], "config always-uv does not take --rp"),
        (["config", "colour", "v1", "red"],
         "config takes: always-uv ID on|off, or min-pin-length ID N [--rp RPID]... [--force-change]"),
        (["agent", "now"], "agent takes no operands"),
        (["agent", "--pinentry", "pinentry-tty"], "--pinentry goes with --desktop"),
        (["agent", "--rp", "example.org"], "agent does not take --rp"),
    ] as [([String], String)])
    func usageErrorsExit64(_ arguments: [String], _ message: String) async {
        let shown = await authctl(["--socket", "/nonexistent/authkeyd.sock"] + arguments)
        #expect(shown.status == 64, "\(arguments): \(shown)")
        #expect(shown.errors == (await usageError(message)), "\(arguments)")
        #expect(shown.output.isEmpty, "\(arguments)")
    }

    /// A daemon that is not there: exit 69 (EX_UNAVAILABLE), and a message
    /// naming the socket, whichever way it was found.
    @Test func noDaemonExits69() async {
        let socket = "/nonexistent/authkeyd.sock"
        for (arguments, environment) in [
            (["list", "--socket", socket], [:]), (["--socket", socket, "info", "v1"], [:]),
            (["registrations", "list"], ["AUTHKEYD_SOCKET": socket]),
            (["--json", "select"], ["AUTHKEYD_SOCKET": "/elsewhere.sock", "XDG_RUNTIME_DIR": "/nonexistent"]),
        ] as [([String], [String: String])] {
            let shown = await authctl(arguments, environment: environment)
            let named = arguments.contains("--socket") ? socket : environment["AUTHKEYD_SOCKET"] ?? ""
            #expect(shown.status == 69, "\(arguments): \(shown)")
            #expect(shown.errors.hasPrefix("authctl: cannot connect to \(named) ("), "\(shown)")
            #expect(shown.errors.hasSuffix("is authkeyd running? try: systemctl start authkeyd.socket\n"), "\(shown)")
            #expect(shown.output.isEmpty)
        }
    }
}
