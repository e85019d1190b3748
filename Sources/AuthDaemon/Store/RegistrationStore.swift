import AuthProtocol
import Dispatch
import Glibc
import Synchronization
import SystemKit

/// The daemon's record of registrations, one file per user:
/// `<state>/registrations/<uid>.json`, mode 0600 in a 0700 directory, in
/// the store's own format (`RegistrationFile`).
///
/// Why whole-file atomic replacement and not SQLite: a user has tens of
/// registrations, written rarely (register, rename, delete), so rewriting
/// the file is cheap; `AtomicFile` (write a temporary, fsync, rename, fsync
/// the directory) leaves either the old or the new file after a crash at
/// any instant, with no new dependency and a file a person can read.
///
/// The in-memory state lives on the broker's queue and is what requests
/// read; the files are read (the first time a user's is needed) and
/// written on the store's own thread (`RegistrationWriter`), in order, so
/// that neither a slow read nor an fsync holds up the broker: the request
/// that needs the file awaits it, and the broker serves the others
/// meanwhile. Registrations, renames and deletions are durable before the
/// call returns (it awaits the write, and a change that could not be
/// written is not made). The sign count and last use, updated by every
/// assertion, are written a moment later, several at once: losing the
/// last of those in a crash costs a statistic, not a registration. The
/// shutdown awaits `flush`, which writes those and waits for every write.
final class RegistrationStore: @unchecked Sendable {
    // Only touched on the broker's queue.
    private let directory: String
    private let logger: Logger
    private let queue: DispatchQueue
    private let writer: RegistrationWriter
    private var cache: [uid_t: [Registration]] = [:]
    /// The requests awaiting a user's file being read: one read for all.
    private var loading: [uid_t: [CheckedContinuation<Result<[Registration], RegistrationStoreError>, Never>]] = [:]
    /// Per user, the requests that have their list (from the read, or
    /// from the cache behind those) but have not run since: a request that
    /// comes meanwhile waits its turn behind them, or it would take the
    /// cached list and queue its write first (renames written out of the
    /// order they came).
    private var resuming: [uid_t: Int] = [:]
    /// The users whose sign counts and last uses changed since their file
    /// was last written.
    private var unsavedUse: [uid_t: UnsavedUse] = [:]
    private var flushScheduled = false
    /// Tests only: runs on the writer's thread before a user's file is
    /// read, so that a test can hold the read there and see the broker go
    /// on serving (Tests/README.md).
    let beforeRead = Mutex<(@Sendable (uid_t) -> Void)?>(nil)
    /// Set by the shutdown's flush: what is not written now is lost.
    private var isFinalFlush = false
    static let usageFlushDelay: Duration = .seconds(2)

    private struct UnsavedUse {
        /// When the first of them was made, for the log.
        var since: String
        /// How many there were: a write clears the entry only if it wrote them all.
        var count: Int
    }

    /// `queue` is the broker's: the in-memory state's, and the delayed
    /// writes' timer's.
    init(directory: String, logger: Logger, queue: DispatchQueue) {
        self.directory = directory
        self.logger = logger
        self.queue = queue
        writer = RegistrationWriter(directory: directory)
    }

    /// Creates the directory; reports why it cannot.
    func prepare() throws(SystemError) {
        try FileSystem.makeDirectory(directory, mode: 0o700, intermediates: true)
        removeTemporaries()
    }

    /// A crash while a file was being replaced leaves the temporary it was
    /// written to (`UID.json.tmp.PID`, see `AtomicFile`) beside the file,
    /// which is whole: its old content or its new. Each would otherwise
    /// stay for good, a stale copy of the user's registrations.
    private func removeTemporaries() {
        let stale = (directoryNames(directory) ?? []).filter { $0.contains(".json.tmp.") }
        for name in stale {
            do { try FileSystem.removeFile("\(directory)/\(name)") } catch {
                logger.warning("cannot remove \(directory)/\(name), left by a crash: \(error)")
            }
        }
        if !stale.isEmpty { logger.info("removed \(stale.count) temporary file(s) left in \(directory) by a crash") }
    }

    private func file(for uid: uid_t) -> String { RegistrationFile.path(for: uid, in: directory) }

    /// The user's registrations, read from disk the first time (a small
    /// file, once per user and run), on the writer's thread: requests for
    /// the same user meanwhile await the same read.
    func registrations(
        for uid: uid_t, isolation: isolated (any Actor)? = #isolation
    ) async throws(RegistrationStoreError) -> [Registration] {
        if cache[uid] != nil, resuming[uid, default: 0] > 0 {
            // Behind the requests resumed before this one: a turn on the
            // queue, after theirs.
            resuming[uid, default: 0] += 1
            await Task.yield()
            doneResuming(uid)
        }
        if let cached = cache[uid] { return cached }
        let loaded = await withCheckedContinuation { continuation in
            load(uid, for: continuation)
        }
        doneResuming(uid)
        // What is cached now: another request for the user may have changed
        // it between the read and this one's turn.
        if let cached = cache[uid] { return cached }
        return try loaded.get()
    }

    private func doneResuming(_ uid: uid_t) {
        let left = resuming[uid, default: 1] - 1
        resuming[uid] = left > 0 ? left : nil
    }

    /// Reads the user's file on the writer's thread, unless a read of it
    /// is under way already; `waiter` is resumed with what it holds.
    private func load(_ uid: uid_t, for waiter: CheckedContinuation<Result<[Registration], RegistrationStoreError>, Never>) {
        guard loading[uid] == nil else {
            loading[uid]?.append(waiter)
            return
        }
        loading[uid] = [waiter]
        let beforeRead = beforeRead.withLock { $0 }
        writer.load(for: uid, { [logger] path throws(RegistrationStoreError) in
            beforeRead?(uid)
            return try Self.read(path, logger: logger)
        }, done: { [self] result in
            queue.async { self.loaded(uid, result) }
        })
    }

    /// On the broker's queue: the read's outcome to everyone who awaited it.
    private func loaded(_ uid: uid_t, _ result: Result<[Registration], RegistrationStoreError>) {
        // Not cached when unreadable (a newer format): each use says why.
        if case .success(let registrations) = result { cache[uid] = registrations }
        let waiters = loading.removeValue(forKey: uid) ?? []
        resuming[uid, default: 0] += waiters.count
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// On the writer's thread: what the file at `path` holds; none when it
    /// does not exist.
    static func read(_ path: String, logger: Logger) throws(RegistrationStoreError) -> [Registration] {
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(path) } catch { throw .system(error) }
        guard let bytes else { return [] }
        do throws(RegistrationFile.ReadError) {
            return try RegistrationFile.decode(bytes)
        } catch .newerVersion(let version) {
            // Nothing overwrites it.
            throw .newerFormat(file: path, version: version)
        } catch {
            // Keep the unreadable file for a person to look at; start afresh.
            logger.error("\(path) is unreadable (\(error)); keeping it as .corrupt")
            do { try FileSystem.rename(path, to: path + ".corrupt") } catch {
                logger.error("cannot keep it: \(error)")
            }
            return []
        }
    }

    func add(_ registration: Registration, for uid: uid_t, isolation: isolated (any Actor)? = #isolation) async throws(RegistrationStoreError) {
        try await apply(for: uid) { list in
            list.removeAll { $0.id == registration.id }
            list.append(registration)
        }
    }

    /// Renames; nil when the user has no such registration.
    func rename(
        id: String, to name: String, for uid: uid_t, isolation: isolated (any Actor)? = #isolation
    ) async throws(RegistrationStoreError) -> Registration? {
        guard try await registrations(for: uid).contains(where: { $0.id == id }) else { return nil }
        return try await apply(for: uid) { list -> Registration? in
            guard let index = list.firstIndex(where: { $0.id == id }) else { return nil }
            list[index].friendlyName = name
            return list[index]
        }
    }

    /// Deletes; false when the user has no such registration.
    func delete(id: String, for uid: uid_t, isolation: isolated (any Actor)? = #isolation) async throws(RegistrationStoreError) -> Bool {
        guard try await registrations(for: uid).contains(where: { $0.id == id }) else { return false }
        return try await apply(for: uid) { list in
            guard let index = list.firstIndex(where: { $0.id == id }) else { return false }
            list.remove(at: index)
            return true
        }
    }

    /// Makes `change` to the user's file on the writer's thread and, once
    /// it is written, to the in-memory state, in the order the changes
    /// were asked for; a change that could not be written is not made.
    private func apply<Outcome: Sendable>(
        for uid: uid_t, isolation: isolated (any Actor)? = #isolation,
        _ change: @escaping @Sendable (inout [Registration]) -> Outcome
    ) async throws(RegistrationStoreError) -> Outcome {
        // Read (so that the writer has the file's copy) before the first write.
        _ = try await registrations(for: uid)
        let written: Result<Void, SystemError> = await withCheckedContinuation { continuation in
            writer.write(for: uid, { _ = change(&$0) }, done: { continuation.resume(returning: $0) })
        }
        if case .failure(let error) = written { throw .system(error) }
        var list = cache[uid] ?? []
        let outcome = change(&list)
        cache[uid] = list
        return outcome
    }

    /// Notes an assertion; written with the next batch.
    func recordUse(
        id: String, signCount: UInt32, at time: Int64, for uid: uid_t, isolation: isolated (any Actor)? = #isolation
    ) async -> Registration? {
        guard var list = try? await registrations(for: uid), let index = list.firstIndex(where: { $0.id == id }) else { return nil }
        list[index].signCount = signCount
        list[index].lastUsedAt = time
        cache[uid] = list
        unsavedUse[uid, default: UnsavedUse(since: Logger.timestamp(), count: 0)].count += 1
        scheduleUsageFlush()
        return list[index]
    }

    /// Writes the pending sign counts and last uses, and returns once every
    /// write asked for so far is done (at shutdown, before exit). Called
    /// on the broker, as every method is.
    func flush(isolation: isolated (any Actor)? = #isolation) async {
        isFinalFlush = true
        writeUse()
        // Each write's outcome is handled on the queue (`useWritten`),
        // ahead of this call's return to it.
        await writer.drain()
    }

    private func scheduleUsageFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        queue.asyncAfter(deadline: .now() + .milliseconds(Self.usageFlushDelay.wholeMilliseconds)) { [self] in
            flushScheduled = false
            writeUse()
        }
    }

    /// Queues a write of each unsaved use: the sign counts and last uses
    /// the broker holds now, copied onto the file's records.
    private func writeUse() {
        for (uid, unsaved) in unsavedUse {
            guard let list = cache[uid] else { continue }
            let uses = Dictionary(list.map { ($0.id, ($0.signCount, $0.lastUsedAt)) }, uniquingKeysWith: { _, last in last })
            writer.write(for: uid, { registrations in
                for index in registrations.indices {
                    guard let use = uses[registrations[index].id] else { continue }
                    (registrations[index].signCount, registrations[index].lastUsedAt) = use
                }
            }, done: { [self] result in
                queue.async { self.useWritten(for: uid, count: unsaved.count, result) }
            })
        }
    }

    private func useWritten(for uid: uid_t, count: Int, _ result: Result<Void, SystemError>) {
        guard let unsaved = unsavedUse[uid] else { return }
        switch result {
        case .success:
            // Uses noted while it was written wait for the next write.
            if unsaved.count <= count { unsavedUse[uid] = nil }
        case .failure(let error):
            let consequence = isFinalFlush
                ? "their sign counts and last uses are lost with this exit"
                : "their sign counts and last uses are written again with the next use, and at shutdown"
            logger.error("registrations of uid \(uid) changed since \(unsaved.since) are not on disk: \(error) (\(file(for: uid)); \(consequence))")
        }
    }
}

/// Why the store could not read or write a user's registrations.
enum RegistrationStoreError: Error, CustomStringConvertible {
    case system(SystemError)
    /// The user's file is of a format this daemon does not know; it is
    /// left as it is.
    case newerFormat(file: String, version: Int)

    var description: String {
        switch self {
        case .system(let error): return "\(error)"
        case .newerFormat(let file, let version):
            return "\(file): \(RegistrationFile.ReadError.newerVersion(version)); it is left as it is"
        }
    }
}
