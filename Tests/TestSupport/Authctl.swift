import AuthProtocol
import Foundation

/// Runs the built authctl on the daemon's socket in a session of its own
/// (`setsid`): without a controlling terminal it must take every answer
/// from its arguments, even when the tests run from a terminal. `pins`,
/// if given, reach authctl on file descriptor 3 through a pipe — never in
/// any argv.
public func authctl(_ daemon: DaemonProcess, _ arguments: [String], pins: String? = nil) throws -> CommandResult {
    let redirections = pins == nil ? "</dev/null" : "3<&0 </dev/null"
    let command = [builtProduct("authctl"), "--socket", daemon.socketPath] + arguments
    return try run("/bin/sh", ["-c", "exec /usr/bin/setsid -w \"$@\" \(redirections)", "sh"] + command, input: pins ?? "")
}

extension CommandResult {
    /// The one line of JSON a `--json` run printed.
    public func json() throws -> JSONValue {
        try JSONParser().parse(Array(standardOutput.utf8.dropLast()))
    }
}

/// authctl with `pins` on `--pin-fd 3`, a line a PIN.
public func authctl(_ daemon: DaemonProcess, _ arguments: [String], pinFD pins: String) throws -> CommandResult {
    try authctl(daemon, arguments + ["--pin-fd", "3"], pins: pins)
}

/// The PIN retries key v1 has left, as `authctl pin retries v1 --json`
/// says (nil: no PIN set).
public func pinRetries(_ daemon: DaemonProcess) throws -> Int? {
    let result = try authctl(daemon, ["pin", "retries", "v1", "--json"])
    guard result.status == 0 else { throw AuthctlFailure(result: result) }
    return try result.json()["pinRetries"]?.integerValue.map(Int.init)
}

/// An authctl run that failed, with what it printed.
public struct AuthctlFailure: Error, CustomStringConvertible {
    public let result: CommandResult
    public var description: String { "authctl exited \(result.status): \(result.standardError)" }
}
