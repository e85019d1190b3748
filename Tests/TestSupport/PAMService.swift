import Foundation
import Glibc
import Testing

/// A PAM service of the test's own, `/etc/pam.d/authkeyd-test-N`, whose
/// one auth line is the built pam_authkeyd module with the given
/// arguments, and `pamtester` to authenticate through it as sudo or login
/// would (libpam loads the module, the conversation is pamtester's, on
/// its standard input). Root only; the file goes with the value.
public final class PAMService {
    public static var isAvailable: Bool { getuid() == 0 && isInstalled("pamtester") }
    public static let module = builtProduct("libpam_authkeyd.so")

    public let name: String
    private let path: String

    public init(arguments: [String]) throws {
        name = "authkeyd-test-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        path = "/etc/pam.d/\(name)"
        let line = (["auth", "required", Self.module] + arguments).joined(separator: " ")
        try "# written by an authkeyd test, removed when it ends\n\(line)\n".write(toFile: path, atomically: true, encoding: .utf8)
    }

    deinit { unlink(path) }

    /// `pamtester SERVICE USER authenticate`, `input` on its standard input
    /// (the answers to its prompts, a line each).
    public func authenticate(_ user: String = "root", input: String = "", timeout: Duration = .seconds(60)) throws -> BoundedRun {
        try runWithin(timeout, "/usr/bin/pamtester", ["-v", name, user, "authenticate"], input: input)
    }
}
