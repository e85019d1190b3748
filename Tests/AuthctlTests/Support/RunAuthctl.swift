import AuthClient
import AuthProtocol
import AuthctlKit
import BrokerTestSupport
import Dispatch
import Glibc
import Synchronization
import SystemKit
import Testing

/// What a user sees of one run of authctl: its standard output, its
/// standard error, and its exit status.
struct Shown: Sendable, CustomStringConvertible {
    var status: Int32
    var output: String
    var errors: String

    var description: String { "exit \(status)\n--- stdout\n\(output)--- stderr\n\(errors)---" }
    /// Standard output's lines, without the last line feed.
    var lines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }

    /// The "Label:  value" lines that info, register and assert print, by label.
    var rows: [String: String] {
        var rows: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            rows[String(line[..<colon])] = String(line[line.index(after: colon)...].drop { $0 == " " })
        }
        return rows
    }

    /// Standard output as one JSON value (`--json`: one line).
    func json() throws -> JSONValue {
        try #require(lines.count == 1, "\(self)")
        return try JSONParser().parse(Array(lines[0].utf8))
    }
}

/// Standard output and standard error, kept as they are written.
final class CapturedOutput: ConsoleOutput {
    private let text = Mutex((output: "", errors: ""))

    func write(_ output: String) { text.withLock { $0.output += output } }
    func writeError(_ errors: String) { text.withLock { $0.errors += errors } }
    func flush() {}

    var output: String { text.withLock { $0.output } }
    var errors: String { text.withLock { $0.errors } }
}

/// Runs authctl's command model as the installed program runs it
/// (`Authctl.run`, which `main.swift` calls), in this process: `arguments`
/// in, what it printed and its exit status out. It has no terminal (as
/// under a service or `setsid`) unless `terminal` names one, and reaches `broker` over a socketpair
/// whatever socket it names; without a broker it connects to the socket
/// path it resolves, as the program does.
///
/// `pins`, if given, are the lines of a pipe handed to `--pin-fd`, as a
/// script hands PINs.
func authctl(
    _ arguments: [String], broker: InProcessBroker? = nil, environment: [String: String] = [:], pins: [String]? = nil,
    terminal: String? = nil, output: CapturedOutput = CapturedOutput()
) async -> Shown {
    let pinPipe: PINPipe?
    do { pinPipe = try pins.map(PINPipe.init) } catch {
        Issue.record("no pipe for --pin-fd: \(error)")
        return Shown(status: -1, output: "", errors: "")
    }
    let connect: @Sendable (String) throws(AuthClientError) -> Int32
    if let broker {
        connect = { _ throws(AuthClientError) in
            do { return try broker.connect() } catch { throw .protocolViolation("the broker in process: \(error)") }
        }
    } else {
        connect = Console.connectToSocket
    }
    let console = Console(
        output: output, environment: environment, terminalPath: terminal, connect: connect,
        sessionQueue: DispatchQueue(label: "authctl-session"), ownsProcess: false)
    let status = await Authctl.run(arguments + (pinPipe?.arguments ?? []), console: console)
    withExtendedLifetime(pinPipe) {}
    return Shown(status: status, output: output.output, errors: output.errors)
}

/// authctl's usage text, as `--help` prints it.
func usageText() async -> String {
    await authctl(["--help"]).output
}

/// What authctl prints for a usage error: the message, then the usage.
func usageError(_ message: String) async -> String {
    "authctl: \(message)\n\n\(await usageText())"
}

/// A pipe whose read end holds `lines` and then ends, as a script hands
/// PINs to `--pin-fd`; closes it when dropped.
final class PINPipe: Sendable {
    let fd: Int32

    init(_ lines: [String]) throws {
        let (reading, writing) = try FileDescriptor.pipe()
        try FileDescriptor.writeAll(writing, Array(lines.map { $0 + "\n" }.joined().utf8))
        FileDescriptor.close(writing)
        fd = reading
    }

    deinit { FileDescriptor.close(fd) }

    /// `--pin-fd N`, for a command line.
    var arguments: [String] { ["--pin-fd", String(fd)] }
}
