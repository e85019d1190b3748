// authctl: the command line for authkeyd.
import AuthClient
import AuthProtocol
import Dispatch
import Glibc
import SystemKit

let usage = """
    Usage: authctl [--socket PATH] [--json] COMMAND [ARGUMENTS]

    Commands:
      list                  the security keys authkeyd serves
      info ID               one key in detail: its CTAP getInfo, PIN and UV state
      watch                 report keys as they come and go, until interrupted
      select [--timeout S]  touch-to-select: every key blinks; prints the one touched

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

let arguments: Arguments
do { arguments = try Arguments(Array(CommandLine.arguments.dropFirst())) } catch {
    fail("\(error)\n\n\(usage)", .usage)
}
if arguments.help { print(usage); exit(0) }
if arguments.version { print("authctl 0.1.0 (protocol \(protocolVersion))"); exit(0) }
guard let command = arguments.subcommand else { fail("no command given\n\n\(usage)", .usage) }

let socketPath = arguments.socket ?? AuthClient.defaultSocketPath(environment: currentEnvironment())

/// Checks the operand count before connecting, so usage errors need no daemon.
func operands(_ count: Int, _ names: String) -> [String] {
    guard arguments.operands.count == count else {
        fail("\(command) takes \(count == 0 ? "no operands" : names)\n\n\(usage)", .usage)
    }
    return arguments.operands
}

let run: @Sendable (AuthClient) async throws(AuthClientError) -> Void
switch command {
case "list":
    _ = operands(0, "")
    let json = arguments.json
    run = { client throws(AuthClientError) in try await Commands.list(client, json: json) }
case "info":
    let id = operands(1, "a key ID (see authctl list)")[0]
    let json = arguments.json
    run = { client throws(AuthClientError) in try await Commands.info(client, id: id, json: json) }
case "watch":
    _ = operands(0, "")
    let json = arguments.json
    signal(SIGINT, SIG_DFL)
    run = { client throws(AuthClientError) in try await Commands.watch(client, json: json) }
case "select":
    _ = operands(0, "")
    var timeout: Duration?
    if let text = arguments.options["timeout"] {
        guard let seconds = Double(text), seconds > 0 else { fail("--timeout takes seconds, such as 30", .usage) }
        timeout = .milliseconds(Int(seconds * 1000))
    }
    let json = arguments.json
    let chosen = timeout
    run = { client throws(AuthClientError) in try await Commands.select(client, timeout: chosen, json: json) }
default:
    fail("unknown command '\(command)'\n\n\(usage)", .usage)
}

do throws(AuthClientError) {
    let client = try AuthClient(socketPath: socketPath)
    try await run(client)
    client.close()
    exit(0)
} catch {
    fail(error)
}
