import AuthProtocol
import Glibc
import SystemKit

/// The thread that writes the registration files, one write at a time in
/// the order they were asked for, so that a slow disk (an fsync can take
/// seconds) holds up only the writes and never the broker's queue.
///
/// It keeps its own copy of what each file holds. A write is a change to
/// that copy, made here and kept only once the file is replaced
/// (`AtomicFile`: a temporary, fsync, rename, fsync of the directory); the
/// store makes the same change to its in-memory state when told it
/// succeeded, so both hold the same registrations, and a change that was
/// not written is in neither.
final class RegistrationWriter: Sendable {
    typealias Change = @Sendable (inout [Registration]) -> Void

    private enum Job: Sendable {
        /// What the file held when the store read it, before any write.
        case seed(uid_t, [Registration])
        case write(uid_t, Change, done: @Sendable (Result<Void, SystemError>) -> Void)
        /// Runs once every job queued before it has.
        case drain(@Sendable () -> Void)
        case stop
    }

    private let jobs = BlockingQueue<Job>()

    init(directory: String) {
        let jobs = jobs
        startThread(name: "registrations") { Self.serve(jobs, directory: directory) }
    }

    /// The thread ends after the writes queued before.
    deinit { jobs.push(.stop) }

    func seed(_ registrations: [Registration], for uid: uid_t) {
        jobs.push(.seed(uid, registrations))
    }

    /// Writes `uid`'s file changed by `change`; `done` runs on the writer's
    /// thread once the file is replaced, or with why it could not be.
    func write(for uid: uid_t, _ change: @escaping Change, done: @escaping @Sendable (Result<Void, SystemError>) -> Void) {
        jobs.push(.write(uid, change, done: done))
    }

    /// Returns once every write asked for before it is done.
    func drain() async {
        await withCheckedContinuation { continuation in
            jobs.push(.drain { continuation.resume() })
        }
    }

    private static func serve(_ jobs: BlockingQueue<Job>, directory: String) {
        var onDisk: [uid_t: [Registration]] = [:]
        while let job = jobs.pop(timeoutMilliseconds: -1) {
            switch job {
            case .seed(let uid, let registrations):
                onDisk[uid] = registrations
            case .write(let uid, let change, let done):
                var registrations = onDisk[uid] ?? []
                change(&registrations)
                do throws(SystemError) {
                    let bytes = try RegistrationFile.encode(registrations)
                    try AtomicFile.write(bytes, to: RegistrationFile.path(for: uid, in: directory), permissions: 0o600)
                    onDisk[uid] = registrations
                    done(.success(()))
                } catch {
                    done(.failure(error))
                }
            case .drain(let done):
                done()
            case .stop:
                return
            }
        }
    }
}
