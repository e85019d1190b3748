import AuthProtocol
import Glibc
import SystemKit

/// The thread that reads and writes the registration files, one job at a
/// time in the order they were asked for, so that a slow disk (an fsync
/// can take seconds, and so can a read from a busy disk) holds up only
/// the store's jobs and never the broker's queue. A user's file is read
/// here the first time the store needs it, in line with the writes: a
/// write asked for before a read is on disk when the read is made.
///
/// It keeps its own copy of what each file holds, from the first read on.
/// A write is a change to that copy, made here and kept only once the file
/// is replaced (`AtomicFile`: a temporary, fsync, rename, fsync of the
/// directory); the store makes the same change to its in-memory state
/// when told it succeeded, so both hold the same registrations, and a
/// change that was not written is in neither.
final class RegistrationWriter: Sendable {
    typealias Change = @Sendable (inout [Registration]) -> Void
    /// What a user's file holds, read from the path given.
    typealias Read = @Sendable (String) throws(RegistrationStoreError) -> [Registration]

    private enum Job: Sendable {
        /// Reads the user's file, and keeps what it held as the copy the
        /// writes change.
        case load(uid_t, Read, done: @Sendable (Result<[Registration], RegistrationStoreError>) -> Void)
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

    /// Reads `uid`'s file with `read`, after the writes asked for before;
    /// `done` runs on the writer's thread with what it holds, or why it
    /// could not be read (then the writes keep no copy of it).
    func load(
        for uid: uid_t, _ read: @escaping Read,
        done: @escaping @Sendable (Result<[Registration], RegistrationStoreError>) -> Void
    ) {
        jobs.push(.load(uid, read, done: done))
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
            case .load(let uid, let read, let done):
                do throws(RegistrationStoreError) {
                    let registrations = try read(RegistrationFile.path(for: uid, in: directory))
                    onDisk[uid] = registrations
                    done(.success(registrations))
                } catch {
                    done(.failure(error))
                }
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
