import AuthClient
import AuthProtocol
import Dispatch
import Glibc
import SystemKit

let authctlVersion = "0.1.0"

let usage = """
    Usage: authctl [--socket PATH] [--json] COMMAND [ARGUMENTS]

    Commands:
      list                  the security keys authkeyd serves
      info ID               one key in detail: its CTAP getInfo, PIN and UV state
      watch                 report keys as they come and go, until interrupted
      select [--timeout S]  touch-to-select: every key blinks; prints the one touched
      register --rp ID --user NAME [OPTIONS]
                            register a credential (WebAuthn create)
      assert --rp ID [OPTIONS]
                            authenticate with a credential (WebAuthn get)
      registrations list | rename ID NAME | delete ID
                            authkeyd's record of your registrations; ID may
                            be the start of a credential id, as list shows it
      agent [--once] [--desktop [--pinentry PROGRAM]]
                            answer the prompts of your programs that cannot
                            ask (scripts, services, OpenSSH's provider, the
                            PAM module): at this terminal, or with desktop
                            dialogs (pinentry, zenity, notifications);
                            --once: for one request
      pam register [OPTIONS] | list [--origin ORIGIN] [--authfile PATH]
                            your line of pam_u2f's authfile, which
                            pam_authkeyd reads: register a key as
                            pamu2fcfg does (--origin ORIGIN, --appid APPID,
                            --resident, --no-presence, --verification,
                            --pin-verification, --algorithm ALG,
                            --authenticator ID, --authfile PATH, --print);
                            list: which of its keys are plugged in

    Key management (authkeyd's admins only; ID as authctl list shows it):
      pin set ID | change ID | retries ID
                            set or change the key's PIN; the attempts left
      reset ID [--yes-really]
                            erase every credential on the key, its PIN and
                            fingerprints; asks you to type its product name
      credentials list ID [--rp RPID] | delete ID CRED
                | update ID CRED [--user NAME] [--display-name TEXT]
                            the discoverable credentials on the key; CRED
                            may be the start of a credential id
      fingerprints info ID | list ID | enroll ID [--name TEXT]
                | rename ID TEMPLATE NAME | delete ID TEMPLATE
                            the fingerprints the key's sensor knows
      config always-uv ID on|off
                            require the PIN or a fingerprint for every use
      config min-pin-length ID N [--rp RPID]... [--force-change]
                            raise the key's minimum PIN length; the sites
                            that may read it; demand a new PIN now

    register options:
      --rp-name NAME          the relying party's name (default: its id)
      --display-name TEXT     the user's display name (default: the user name)
      --user-id B64URL        the user handle (default: 16 random bytes)
      --resident              a discoverable credential, kept on the key
      --attestation none|direct
      --algorithm ALG[,ALG]   es256, eddsa or rs256, most preferred first
                              (default: es256)
      --name TEXT             the name for the key, if authkeyd asks for one

    assert options:
      --credential B64URL     a credential to use; repeatable (none: any
                              discoverable credential of the RP)
      --transaction L=V       a detail to confirm and sign; repeatable, in order
      --user NAME             the account to use when the key holds several
                              for the RP (at a terminal: a numbered list)

    register and assert options:
      --challenge B64URL      (default: 32 random bytes)
      --origin URL            (default: https://RP-ID)
      --uv required|preferred|discouraged
                              user verification (default: preferred)
      --authenticator ID      use this key (see authctl list): no selection
      --pin-fd N              read PINs from file descriptor N, a line each
                              time one is asked (also for key management);
                              never give a PIN in the arguments
      --yes, --no             the answer to "sign this?"
      --format fido2-tools    print what fido2-cred -V / fido2-assert -V read
      --timeout SECONDS

    On a terminal, authctl asks there which key, the PIN (a new PIN twice),
    which account, "sign this?" and the key's name. Without one, it uses
    --authenticator, --pin-fd, --user, --yes or --no and --name (reset:
    --yes-really), and cancels what they do not answer. A PIN the key accepted answers the rest of
    the command: it is asked (and read from --pin-fd) once.

    Options:
      --socket PATH   authkeyd's socket (default: $AUTHKEYD_SOCKET, then
                      $XDG_RUNTIME_DIR/authkeyd.sock if present, then
                      /run/authkeyd/authkeyd.sock)
      --json          machine-readable output: the protocol's JSON
      --help, --version

    Exit status: 0 success, 1 the operation failed, 2 cancelled, 64 usage,
    69 authkeyd or the key unavailable, 70 protocol error, 75 timeout or busy,
    77 permission denied.
    """

/// authctl's command line as the installed program runs it: the arguments
/// (without the program's name) in; the output, and the exit status, out.
public enum Authctl {
    /// Runs one command line. Parsing and a one-call command (list, info)
    /// run on the caller's thread; a session's tasks on
    /// `console.sessionQueue`.
    public static func run(
        _ words: [String], console: Console, isolation: isolated (any Actor)? = #isolation
    ) async -> Int32 {
        let plan: Plan
        do { plan = try Plan(words, console: console) } catch { return report(error, to: console).rawValue }
        // The failure is reported inside `catch` and only its exit code
        // kept, so that the error and its message are released before
        // `exit`: held in the async top level's frame, which LeakSanitizer
        // does not scan, they would be reported as leaked (make
        // test-sanitizers).
        do {
            switch plan.call {
            case nil:
                break
            case .oneCall(let body)?:
                try body(BlockingClient(connectedDescriptor: try console.connect(plan.socketPath)))
            case .session(let body)?:
                let client = AuthClient(connectedDescriptor: try console.connect(plan.socketPath))
                try await withTaskExecutorPreference(QueueExecutor(queue: console.sessionQueue)) { () async throws in
                    try await body(client)
                }
                client.close()
            }
            return ExitCode.success.rawValue
        } catch {
            return report(error, to: console).rawValue
        }
    }
}

/// What a command line asks, checked before connecting, so that usage
/// errors need no daemon: the socket, and how the command talks to the
/// daemon (none for --help and --version, which print here).
struct Plan {
    /// A single call on a blocking socket (nothing started beside it, so a
    /// one-call command starts as fast as a C tool), or a session of calls,
    /// prompts and notifications through `AuthClient`.
    enum Call {
        case oneCall((BlockingClient) throws(AuthClientError) -> Void)
        case session(@Sendable (AuthClient) async throws -> Void)
    }

    var socketPath = ""
    var call: Call?

    init(_ words: [String], console: Console) throws {
        let arguments = try Arguments(words)
        if arguments.help {
            console.print(usage)
            return
        }
        if arguments.version {
            console.print("authctl \(authctlVersion) (protocol \(protocolVersion))")
            return
        }
        guard let command = arguments.subcommand else { throw UsageError("no command given") }
        socketPath = arguments.socket ?? AuthClient.defaultSocketPath(environment: console.environment)

        /// Checks the operand count and the options.
        func operands(_ count: Int, _ names: String, options: Set<String> = []) throws(UsageError) -> [String] {
            try arguments.check(command, takes: options)
            guard arguments.operands.count == count else {
                throw UsageError("\(command) takes \(count == 0 ? "no operands" : names)")
            }
            return arguments.operands
        }

        let json = arguments.json
        switch command {
        case "list":
            _ = try operands(0, "")
            call = .oneCall { client throws(AuthClientError) in try Commands.list(client, json: json, console) }
        case "info":
            let id = try operands(1, "a key ID (see authctl list)")[0]
            call = .oneCall { client throws(AuthClientError) in try Commands.info(client, id: id, json: json, console) }
        case "watch":
            _ = try operands(0, "")
            if console.ownsProcess { setSignalHandler(SIGINT, nil) }
            call = .session { client in try await Commands.watch(client, json: json, console) }
        case "select":
            _ = try operands(0, "", options: ["timeout"])
            let timeout = try arguments.timeout()
            call = .session { client in try await Commands.select(client, timeout: timeout, json: json, console) }
        default:
            guard let type = subcommands[command] else { throw UsageError("unknown command '\(command)'") }
            let subcommand = try type.init(arguments)
            call = .session { client in try await subcommand.run(client, console) }
        }
    }
}
