import AuthProtocol
import Glibc
import SystemKit

/// Where an agent asked to be called back, and the token it is to be
/// shown (`agent.register`'s `callback` and `token`, checked).
struct RegisteredCallback: Equatable, Sendable {
    let name: String
    let token: String
}

/// The agents' callbacks, one per user (the newest registration's), kept
/// in `<state>/agents.json` so that they outlive the daemon: after an idle
/// exit, a restart or a crash, the next daemon calls back the agents the
/// last one knew (authkeyd-protocol(7), "Agents").
///
/// The in-memory state is the broker's and lives on its queue; the file is
/// rewritten whole, mode 0600, on the store's own thread in the order of
/// the changes (`AtomicFile`), so that an fsync never holds up the broker.
/// A change lost in a crash is one made a moment before it: a callback
/// kept too long is found gone at its first call and forgotten then; one
/// not kept leaves its agent waiting unasked, as an agent whose daemon
/// lost its state directory would. The tokens are secrets of the daemon's: in its state directory
/// (0700), never in the log.
final class AgentCallbackStore: @unchecked Sendable {
    private enum Job: Sendable {
        case write([UInt8])
        /// Runs once every write queued before it is done.
        case drain(@Sendable () -> Void)
        case stop
    }

    private let path: String
    private var byUser: [uid_t: RegisteredCallback]
    private let jobs = BlockingQueue<Job>()

    /// The callbacks in `directory`'s file, read now; a file that cannot
    /// be read is logged and left to be replaced at the first change.
    init(directory: String, logger: Logger) {
        path = "\(directory)/agents.json"
        byUser = Self.read(path, logger: logger)
        Self.removeTemporaries(beside: path, logger: logger)
        let jobs = jobs, path = path
        startThread(name: "agent-callbacks") {
            while let job = jobs.pop(timeoutMilliseconds: -1) {
                switch job {
                case .write(let bytes):
                    do throws(SystemError) { try AtomicFile.write(bytes, to: path, permissions: 0o600) } catch {
                        logger.warning("cannot write \(path): \(error); the agents' callbacks as they were before stay on disk")
                    }
                case .drain(let done):
                    done()
                case .stop:
                    return
                }
            }
        }
    }

    /// The thread ends after the writes queued before.
    deinit { jobs.push(.stop) }

    func callback(ofUser uid: uid_t) -> RegisteredCallback? { byUser[uid] }

    /// `callback` is `uid`'s from now on; nil: `uid` has none.
    func set(_ callback: RegisteredCallback?, forUser uid: uid_t) {
        guard byUser[uid] != callback else { return }
        byUser[uid] = callback
        jobs.push(.write(Self.encode(byUser)))
    }

    /// Returns once every change made before is on disk (or failed to be).
    func flush() async {
        await withCheckedContinuation { continuation in
            jobs.push(.drain { continuation.resume() })
        }
    }

    // MARK: - The file

    /// `{"version": 1, "agents": [{"uid", "callback", "token"}, …]}`.
    private struct File: Codable {
        struct Entry: Codable {
            var uid: Int
            var callback: String
            var token: String
        }

        var version: Int
        var agents: [Entry]
    }

    private static func encode(_ callbacks: [uid_t: RegisteredCallback]) -> [UInt8] {
        let entries = callbacks.sorted { $0.key < $1.key }.map { File.Entry(uid: Int($0.key), callback: $0.value.name, token: $0.value.token) }
        var bytes = AuthDaemon.encode(File(version: 1, agents: entries)).serialized()
        bytes.append(0x0A)
        return bytes
    }

    private static func read(_ path: String, logger: Logger) -> [uid_t: RegisteredCallback] {
        let file: File
        do throws(SystemError) {
            guard let bytes = try AtomicFile.read(path) else { return [:] }
            do {
                file = try JSONValueDecoder().decode(File.self, from: try JSONParser().parse(bytes))
            } catch {
                logger.warning("\(path) is not a file of agents' callbacks (\(error)); no agent is called back until it registers again")
                return [:]
            }
        } catch {
            logger.warning("cannot read \(path): \(error); no agent is called back until it registers again")
            return [:]
        }
        var callbacks: [uid_t: RegisteredCallback] = [:]
        for entry in file.agents {
            guard let uid = uid_t(exactly: entry.uid), AgentCallback.problem(withName: entry.callback) == nil,
                AgentCallback.problem(withToken: entry.token) == nil
            else {
                logger.warning("\(path): an entry for uid \(entry.uid) is not a callback; ignored")
                continue
            }
            callbacks[uid] = RegisteredCallback(name: entry.callback, token: entry.token)
        }
        return callbacks
    }

    /// A crash while the file was being replaced leaves its temporary
    /// (`agents.json.tmp.PID`, see `AtomicFile`), tokens and all.
    private static func removeTemporaries(beside path: String, logger: Logger) {
        let directory = FileSystem.directory(containing: path)
        for name in directoryNames(directory) ?? [] where name.hasPrefix("agents.json.tmp.") {
            do { try FileSystem.removeFile("\(directory)/\(name)") } catch {
                logger.warning("cannot remove \(directory)/\(name), left by a crash: \(error)")
            }
        }
    }
}
