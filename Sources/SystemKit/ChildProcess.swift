import Glibc

/// A program started with `posix_spawn`, with pipes to its standard input
/// and from its standard output where asked: what the desktop agent needs
/// to run `pinentry`, `zenity` and `gdbus` as gpg-agent runs pinentry.
///
/// The child gets the default disposition and an empty mask for every
/// signal (the parent may ignore SIGPIPE, and an ignored signal stays
/// ignored across exec), and no descriptor of the parent's beyond the
/// three it is given: every descriptor this code base opens is
/// close-on-exec.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// A pipe to or from the parent (`input` or `output`).
        case pipe
        /// `/dev/null`.
        case null
        /// The parent's own.
        case inherit
    }

    /// How the child ended.
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
    }

    public let pid: pid_t
    /// The write end of the child's standard input, when it is a pipe.
    public let input: Int32?
    /// The read end of the child's standard output, when it is a pipe.
    public let output: Int32?
    private let ended = Protected<Ending?>(nil)

    /// Starts `path` (looked up in `PATH` when it has no slash) with
    /// `arguments` (not counting `argv[0]`, which is `path`), and the
    /// parent's environment with `environment` set over it.
    public init(
        _ path: String, _ arguments: [String], environment: [String: String] = [:],
        standardInput: Stream = .null, standardOutput: Stream = .null, standardError: Stream = .inherit
    ) throws(SystemError) {
        var opened: [Int32] = []
        var parentEnds: (input: Int32?, output: Int32?) = (nil, nil)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
            // The child's ends: it has its own copies now, or failed.
            for fd in opened { FileDescriptor.close(fd) }
        }
        do throws(SystemError) {
            for (target, stream) in [(STDIN_FILENO, standardInput), (STDOUT_FILENO, standardOutput), (STDERR_FILENO, standardError)] {
                switch stream {
                case .inherit:
                    continue
                case .null:
                    let null = try FileDescriptor.open("/dev/null", O_RDWR | O_CLOEXEC)
                    opened.append(null)
                    posix_spawn_file_actions_adddup2(&actions, null, target)
                case .pipe:
                    let pipe = try FileDescriptor.pipe()
                    if target == STDIN_FILENO {
                        opened.append(pipe.reading)
                        parentEnds.input = pipe.writing
                        posix_spawn_file_actions_adddup2(&actions, pipe.reading, target)
                    } else {
                        opened.append(pipe.writing)
                        parentEnds.output = pipe.reading
                        posix_spawn_file_actions_adddup2(&actions, pipe.writing, target)
                    }
                }
            }
            var everySignal = sigset_t()
            sigfillset(&everySignal)
            var noSignal = sigset_t()
            sigemptyset(&noSignal)
            posix_spawnattr_setsigdefault(&attributes, &everySignal)
            posix_spawnattr_setsigmask(&attributes, &noSignal)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            let envp = Self.environment(overriding: environment).map { strdup($0) } + [nil]
            defer {
                argv.forEach { free($0) }
                envp.forEach { free($0) }
            }
            var child = pid_t()
            let status = posix_spawnp(&child, path, &actions, &attributes, argv, envp)
            guard status == 0 else { throw SystemError("posix_spawn(\(path))", code: status) }
            pid = child
            input = parentEnds.input
            output = parentEnds.output
        } catch {
            if let fd = parentEnds.input { FileDescriptor.close(fd) }
            if let fd = parentEnds.output { FileDescriptor.close(fd) }
            throw error
        }
    }

    deinit {
        if let input { FileDescriptor.close(input) }
        if let output { FileDescriptor.close(output) }
    }

    /// Sends `signal` to the child, unless it has been waited for (its pid
    /// may then be another process's).
    public func signal(_ signal: Int32) {
        ended.withLock { ended in
            if ended == nil { _ = kill(pid, signal) }
        }
    }

    /// Asks the child to end (SIGTERM): a dialog closes, its program exits.
    public func terminate() { signal(SIGTERM) }

    /// Waits for the child to end (blocking), once; later calls return the
    /// same ending.
    @discardableResult
    public func wait() -> Ending {
        if let ending = ended.withLock({ $0 }) { return ending }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        let ending: Ending = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
        ended.withLock { $0 = ending }
        return ending
    }

    /// Everything the child prints on its standard output until it closes
    /// it (blocking); nil when reading fails or there is no pipe.
    public func readAllOutput(limit: Int = 1 << 20) -> [UInt8]? {
        guard let output else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count: Int?
            do {
                count = try chunk.withUnsafeMutableBytes { buffer throws(SystemError) in try FileDescriptor.read(output, into: buffer) }
            } catch {
                return nil
            }
            guard let count, count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    /// What the child printed, once it has exited 0; nil when it failed,
    /// was killed, or reading failed (blocking until it ends).
    public func outputIfSucceeded(limit: Int = 1 << 20) -> [UInt8]? {
        let output = readAllOutput(limit: limit)
        guard wait() == .exited(0) else { return nil }
        return output
    }

    /// The parent's environment as `NAME=value` strings, with `overrides` set.
    private static func environment(overriding overrides: [String: String]) -> [String] {
        var entries: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = text.prefix { $0 != "=" }
            if overrides[String(name)] == nil { entries.append(text) }
            index += 1
        }
        return entries + overrides.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }
}
