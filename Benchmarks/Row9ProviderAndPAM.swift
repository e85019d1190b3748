import AuthProtocol
import Glibc
import SystemKit

/// Rows 9 and 10: the two plug-ins' own cost, each against the plain
/// client doing the same through the same daemon in the same run:
/// `ssh-keygen -Y sign` through libauthkeyd-sk.so against `authctl
/// assert` of the same credential; `pamtester` through pam_authkeyd.so
/// against `authctl assert` of the PAM credential.
func providerAndPAM(_ settings: Settings) throws -> [Row] {
    var provider = Row(9, "`ssh-keygen -Y sign` through the provider vs `authctl assert`, same key and credential", target: "none: a figure for the record")
    var pam = Row(10, "`pamtester … authenticate` through pam_authkeyd vs `authctl assert`, same credential", target: "none: a figure for the record")
    let environment = currentEnvironment()
    guard let providerPath = environment["AUTHKEYD_BENCH_PROVIDER"], let modulePath = environment["AUTHKEYD_BENCH_PAM_MODULE"] else {
        throw BenchError("AUTHKEYD_BENCH_PROVIDER and AUTHKEYD_BENCH_PAM_MODULE name the built plug-ins (scripts/bench sets them)")
    }
    let rounds = settings.pick(full: 5, quick: 1), runs = settings.pick(full: 30, quick: 5), warmup = settings.pick(full: 3, quick: 1)
    let daemon = try DaemonUnderTest(["--virtual-key", "name=K1"])
    defer { _ = daemon.stop() }
    _ = try daemon.waitForKeys(1)
    let directory = daemon.directory
    let authctl = builtProduct("authctl")

    // OpenSSH: an ed25519-sk key made through the provider, and its key handle for authctl.
    let key = directory.file("id_ed25519_sk")
    let made = runShell(
        "AUTHKEYD_SOCKET=\(daemon.socketPath) ssh-keygen -q -t ed25519-sk -w \(providerPath) -O device=v1 -N '' -f \(key) </dev/null",
        in: directory)
    guard made == 0 else { throw BenchError("ssh-keygen could not make a key through the provider: \(DaemonUnderTest.read(directory.file("shell.log")))") }
    try AtomicFile.write(Array("a file to sign\n".utf8), to: directory.file("message"), permissions: 0o644)
    let handle = try sshKeyHandle(of: key)
    let sign = "AUTHKEYD_SOCKET=\(daemon.socketPath) SSH_SK_PROVIDER=\(providerPath) ssh-keygen -Y sign -f \(key) -n file < \(directory.file("message")) > /dev/null"
    let assertSSH = "\(authctl) --socket \(daemon.socketPath) assert --rp ssh: --credential \(handle) --uv discouraged > /dev/null"
    let ssh = try HyperfineRounds([sign, assertSSH], rounds: rounds, runs: runs, warmup: warmup, shell: true, in: directory, row: 9)
    let sshD = Distribution(ssh.samples[sign] ?? []), assertD = Distribution(ssh.samples[assertSSH] ?? [])
    let sshExtra = ssh.differences(sign, assertSSH)
    provider.measured = "ssh-keygen p50 \(fixed(sshD.p50, 1)) ms vs authctl p50 \(fixed(assertD.p50, 1)) ms: "
        + "+\(fixed(median(sshExtra), 1)) ms (median of \(count(rounds, "round")))"
    provider.verdict = .reported
    provider.method = [
        "Debian's `ssh-keygen -Y sign -f KEY -n file` (data on standard input, the signature to /dev/null), the key",
        "an ed25519-sk key made through the release provider (`-static-stdlib`, as installed) on a running release",
        "`authkeyd` with one virtual key (presence immediate, no PIN), against `authctl assert --rp ssh: --credential",
        "HANDLE --uv discouraged` of the same credential: both ask the daemon for one assertion; what ssh-keygen adds",
        "is its own start, ssh-sk-helper's, loading the provider (dlopen, the Swift runtime's start) and OpenSSH's",
        "signature format. hyperfine through a shell, \(count(rounds, "round")) of \(warmup) warm-up + \(runs) runs, the order turned",
        "each round. (`Benchmarks/Row9ProviderAndPAM.swift`)",
        "",
        "- `ssh-keygen -Y sign` through the provider: \(sshD.summary(1))",
        "- `authctl assert`, same credential: \(assertD.summary(1))",
        "- difference of the medians per round: \(sshExtra.map { fixed($0, 1) }.joined(separator: ", ")) ms",
    ]

    // PAM: a service of the bench's own, root's line made by authctl pam register.
    guard getuid() == 0 else {
        pam.measured = "not measured: needs root (a service in /etc/pam.d)"
        return [provider, pam]
    }
    let authFile = directory.file("u2f_keys")
    let registered = runShell(
        "\(authctl) --socket \(daemon.socketPath) pam register --origin pam://bench --authfile \(authFile) --authenticator v1 </dev/null",
        in: directory)
    guard registered == 0, let line = (try? AtomicFile.read(authFile)).map({ String(decoding: $0!, as: UTF8.self) }) else {
        throw BenchError("authctl pam register failed: \(DaemonUnderTest.read(directory.file("shell.log")))")
    }
    let pamHandle = String(line.split(separator: ":")[1].split(separator: ",")[0])
    let pamCredential = Base64URL.encode(Base64.decode(pamHandle) ?? [])
    let service = "authkeyd-bench-\(getpid())"
    try AtomicFile.write(
        Array("auth required \(modulePath) socket=\(daemon.socketPath) authfile=\(authFile) origin=pam://bench\n".utf8),
        to: "/etc/pam.d/\(service)", permissions: 0o644)
    defer { unlink("/etc/pam.d/\(service)") }
    let pamtester = "pamtester \(service) root authenticate > /dev/null 2>&1"
    let assertPAM = "\(authctl) --socket \(daemon.socketPath) assert --rp pam://bench --credential \(pamCredential) --uv discouraged > /dev/null"
    let timed = try HyperfineRounds([pamtester, assertPAM], rounds: rounds, runs: runs, warmup: warmup, shell: true, in: directory, row: 10)
    let pamD = Distribution(timed.samples[pamtester] ?? []), plainD = Distribution(timed.samples[assertPAM] ?? [])
    let pamExtra = timed.differences(pamtester, assertPAM)
    pam.measured = "pamtester p50 \(fixed(pamD.p50, 1)) ms vs authctl p50 \(fixed(plainD.p50, 1)) ms: "
        + "\(pamExtra.map { $0 >= 0 ? "+" : "" }.first ?? "")\(fixed(median(pamExtra), 1)) ms (median of \(count(rounds, "round")))"
    pam.verdict = .reported
    pam.method = [
        "`pamtester SERVICE root authenticate` for a service of the bench's own whose one line is the release",
        "`pam_authkeyd.so` (as installed), root's line made by `authctl pam register`, the same daemon and key as",
        "row 9; against `authctl assert` of the same credential at `pam://bench`. The module checks the signature",
        "itself (libcrypto) and pamtester loads libpam and the module (the Swift runtime's start) each time.",
        "\(count(rounds, "round")) of \(warmup) warm-up + \(runs) runs, through a shell, the order turned each round.",
        "",
        "- `pamtester … authenticate`: \(pamD.summary(1))",
        "- `authctl assert`, same credential: \(plainD.summary(1))",
        "- difference of the medians per round: \(pamExtra.map { fixed($0, 1) }.joined(separator: ", ")) ms",
    ]
    return [provider, pam]
}

/// Runs `command` with /bin/sh, its output to shell.log in `directory`; its status.
private func runShell(_ command: String, in directory: ScratchDirectory) -> Int32 {
    guard let pid = try? spawn("/bin/sh", ["-c", command], environment: childEnvironment(), outputPath: directory.file("shell.log")) else {
        return -1
    }
    return reap(pid, timeoutMilliseconds: 60_000)
}

/// The key handle (credential id, base64url) of an OpenSSH security-key
/// private key file, which keeps it in the clear (`ssh-keygen -t …-sk -N ''`).
private func sshKeyHandle(of path: String) throws -> String {
    guard let text = try AtomicFile.read(path).map({ String(decoding: $0, as: UTF8.self) }) else { throw BenchError("no \(path)") }
    let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
    guard let blob = Base64.decode(body) else { throw BenchError("\(path) is not an OpenSSH key") }
    // openssh-key-v1: the private section holds, for sk-ssh-ed25519,
    // string type, string pubkey, string application, byte flags, string key handle, string reserved.
    var reader = SSHReader(blob)
    guard reader.bytes(count: 15) == Array("openssh-key-v1\0".utf8) else { throw BenchError("\(path): no openssh-key-v1 magic") }
    for _ in 0..<3 { _ = try reader.string() }  // cipher, kdf, kdf options
    _ = try reader.uint32()  // number of keys
    _ = try reader.string()  // public key blob
    var secret = SSHReader(try reader.string())
    _ = try secret.uint32(); _ = try secret.uint32()  // check integers
    _ = try secret.string(); _ = try secret.string(); _ = try secret.string()  // type, public key, application
    _ = secret.bytes(count: 1)  // flags
    return Base64URL.encode(try secret.string())
}

private struct SSHReader {
    var bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    mutating func bytes(count: Int) -> [UInt8] {
        let end = min(offset + count, bytes.count)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }
    mutating func uint32() throws -> UInt32 {
        let four = bytes(count: 4)
        guard four.count == 4 else { throw BenchError("a short OpenSSH key") }
        return four.reduce(0) { $0 << 8 | UInt32($1) }
    }
    mutating func string() throws -> [UInt8] {
        let length = Int(try uint32())
        guard offset + length <= bytes.count else { throw BenchError("a short OpenSSH key") }
        return bytes(count: length)
    }
}
