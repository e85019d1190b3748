import Foundation
import Glibc
import Testing

/// Debian's own OpenSSH programs (ssh-keygen, ssh-agent, ssh-add, ssh), run
/// as a user who has nothing of their own: a clean environment (`env -i`),
/// a temporary HOME, no terminal (a session of their own), and
/// `AUTHKEYD_SOCKET` naming the test's daemon, which `ssh-sk-helper` passes
/// on to the provider it loads. PINs reach OpenSSH only through
/// `SSH_ASKPASS` (`SSH_ASKPASS_REQUIRE=force`), from a file the test
/// writes: never in an argument.
public struct OpenSSHUser: Sendable {
    /// HOME, and the place for keys, messages and signatures.
    public let home: TemporaryDirectory
    /// The daemon the provider talks to.
    public var socketPath: String
    /// The provider, as the package built it.
    public let provider = builtProduct("libauthkeyd-sk.so")

    /// Fails the test, saying how to get them, without the programs or the provider.
    public init(socketPath: String) throws {
        for program in ["ssh-keygen", "ssh-agent", "ssh-add", "ssh"] {
            try #require(isInstalled(program), "needs \(program) (Debian package openssh-client; scripts/install-deps installs it)")
        }
        try #require(
            FileManager.default.fileExists(atPath: builtProduct("libauthkeyd-sk.so")),
            "needs the provider \(builtProduct("libauthkeyd-sk.so")) (swift build --build-tests builds it)")
        home = TemporaryDirectory(prefix: "authkeyd-ssh")
        self.socketPath = socketPath
        try answerPINPrompts(with: "")
    }

    public func file(_ name: String) -> String { home.file(name) }

    /// The askpass program: it notes each prompt in `askpass.log` (so that a
    /// test can see what OpenSSH asked) and answers with the text of
    /// `askpass.answer`.
    private var askpass: String { file("askpass") }
    public var askpassPrompts: [String] {
        fileText(file("askpass.log")).split(separator: "\n").map(String.init)
    }

    /// What every prompt through askpass is answered with from now on.
    public func answerPINPrompts(with pin: String) throws {
        try pin.write(toFile: file("askpass.answer"), atomically: true, encoding: .utf8)
        let script = """
            #!/bin/sh
            printf '%s\\n' "$1" >> '\(file("askpass.log"))'
            cat '\(file("askpass.answer"))'
            """
        try script.write(toFile: askpass, atomically: true, encoding: .utf8)
        chmod(askpass, 0o700)
    }

    /// The environment every program gets: nothing of the test's but a
    /// sanitizer's or coverage's settings, which the provider, built with
    /// them, reads inside ssh-sk-helper.
    public func environment(_ extra: [String: String] = [:]) -> [String: String] {
        let instrumentation = ProcessInfo.processInfo.environment.filter {
            $0.key.hasSuffix("SAN_OPTIONS") || $0.key == "LLVM_PROFILE_FILE"
        }
        return instrumentation.merging([
            "PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": home.path, "USER": "root", "LOGNAME": "root",
            "AUTHKEYD_SOCKET": socketPath, "SSH_ASKPASS": askpass, "SSH_ASKPASS_REQUIRE": "force",
        ]) { $1 }.merging(extra) { $1 }
    }

    /// `env -i -C DIRECTORY NAME=VALUE... PROGRAM ARGUMENTS`: the program
    /// with exactly `environment(extra)`, in `directory` (default HOME).
    private func command(_ program: String, _ arguments: [String], environment extra: [String: String], directory: String?)
        -> [String]
    {
        let variables = environment(extra).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return ["-i", "-C", directory ?? home.path] + variables + [program] + arguments
    }

    /// Runs an OpenSSH program to its end (killed after `timeout`), with
    /// `input` as its standard input.
    public func run(
        _ program: String, _ arguments: [String], input: String = "", environment extra: [String: String] = [:],
        directory: String? = nil, timeout: Duration = .seconds(30)
    ) throws -> BoundedRun {
        let result = try runWithin(
            timeout, "/usr/bin/env", command(program, arguments, environment: extra, directory: directory), input: input,
            newSession: true)
        if result.timedOut { Issue.record("\(result)") }
        return result
    }

    /// Starts an OpenSSH program in the background.
    public func start(
        _ program: String, _ arguments: [String], input: String = "", environment extra: [String: String] = [:]
    ) throws -> StartedProgram {
        try StartedProgram(
            "/usr/bin/env", command(program, arguments, environment: extra, directory: nil), input: input, newSession: true)
    }
}

extension OpenSSHUser {
    /// `ssh-keygen -t TYPE -w PROVIDER -N '' -f FILE` plus `options`
    /// (`-O resident`, …): the new key's public line, from FILE.pub.
    public func enroll(_ type: String, file name: String = "id", options: [String] = []) throws -> String {
        let result = try run("ssh-keygen", ["-t", type, "-w", provider, "-N", "", "-f", file(name)] + options.flatMap { ["-O", $0] })
        guard result.succeeded else { throw OpenSSHFailure(result: result) }
        return fileText(file("\(name).pub"))
    }

    /// `ssh-keygen -Y sign -n file` of `message` (written to HOME) with
    /// the key in `key`, the provider in `SSH_SK_PROVIDER`, started in the
    /// background: `signature(of:)` reads what it wrote.
    public func startSigning(_ message: String, key: String = "id", messageFile: String = "message") throws -> StartedProgram {
        try message.write(toFile: file(messageFile), atomically: true, encoding: .utf8)
        // ssh-keygen would ask before it overwrote an earlier signature,
        // and without an answer keep it and still succeed.
        unlink(file("\(messageFile).sig"))
        return try start(
            "ssh-keygen", ["-Y", "sign", "-f", file(key), "-n", "file", file(messageFile)],
            environment: ["SSH_SK_PROVIDER": provider])
    }

    /// The armoured signature a finished `startSigning` wrote, if any.
    public func signature(messageFile: String = "message") -> String? {
        let text = fileText(file("\(messageFile).sig"))
        return text.isEmpty ? nil : text
    }

    /// `startSigning`, waited for: the result, and the signature when it succeeded.
    public func sign(_ message: String, key: String = "id", messageFile: String = "message") throws -> (BoundedRun, String?) {
        let result = try startSigning(message, key: key, messageFile: messageFile).finish(within: .seconds(30))
        if result.timedOut { Issue.record("\(result)") }
        return (result, result.succeeded ? signature(messageFile: messageFile) : nil)
    }

    /// `ssh-keygen -vv -Y verify` of `message` against `signature`, with an
    /// allowed_signers file that names `publicKey` for signer@authkeyd.
    /// OpenSSH needs no key and no provider for it.
    public func verify(_ message: String, signature: String, publicKey: String) throws -> BoundedRun {
        try "signer@authkeyd \(publicKeyPart(publicKey))\n".write(toFile: file("allowed_signers"), atomically: true, encoding: .utf8)
        try signature.write(toFile: file("checked.sig"), atomically: true, encoding: .utf8)
        return try run(
            "ssh-keygen",
            ["-vv", "-Y", "verify", "-f", file("allowed_signers"), "-I", "signer@authkeyd", "-n", "file", "-s", file("checked.sig")],
            input: message)
    }
}

/// The flags byte of a verified signature, as `ssh-keygen -vv -Y verify`
/// reports it ("signature details: counter = N, flags = 0xNN").
public func signatureFlags(_ verification: BoundedRun) -> UInt8? {
    guard let range = verification.standardError.range(of: "flags = 0x") else { return nil }
    return UInt8(verification.standardError[range.upperBound...].prefix(2), radix: 16)
}

/// The type and base64 of a public key line, without its comment.
public func publicKeyPart(_ line: String) -> String {
    line.split(whereSeparator: { $0 == " " || $0 == "\n" }).prefix(2).joined(separator: " ")
}

/// An OpenSSH program that failed; the test has an issue with its output.
public struct OpenSSHFailure: Error, CustomStringConvertible {
    public let result: BoundedRun
    public var description: String { "\(result)" }
}
