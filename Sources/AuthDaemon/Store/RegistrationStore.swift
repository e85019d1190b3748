import AuthProtocol
import Dispatch
import Glibc
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
/// Registrations, renames and deletions are durable before the call
/// returns. The sign count and last use, updated by every assertion, are
/// written a moment later, several at once: losing the last of those in a
/// crash costs a statistic, not a registration.
final class RegistrationStore: @unchecked Sendable {
    // Only touched on the broker's executor.
    private let directory: String
    private let logger: Logger
    private var cache: [uid_t: [Registration]] = [:]
    private var dirtyUsage: Set<uid_t> = []
    private var flushScheduled = false
    private let flushQueue: DispatchQueue
    static let usageFlushDelay: Duration = .seconds(2)

    init(directory: String, logger: Logger, queue: DispatchQueue) {
        self.directory = directory
        self.logger = logger
        flushQueue = queue
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

    /// The user's registrations, read from disk the first time.
    func registrations(for uid: uid_t) throws(RegistrationStoreError) -> [Registration] {
        if let cached = cache[uid] { return cached }
        var loaded: [Registration] = []
        let bytes: [UInt8]?
        do { bytes = try AtomicFile.read(file(for: uid)) } catch { throw .system(error) }
        if let bytes {
            do throws(RegistrationFile.ReadError) {
                loaded = try RegistrationFile.decode(bytes)
            } catch .newerVersion(let version) {
                // Not cached: each use says why, and nothing overwrites it.
                throw .newerFormat(file: file(for: uid), version: version)
            } catch {
                // Keep the unreadable file for a person to look at; start afresh.
                logger.error("\(file(for: uid)) is unreadable (\(error)); keeping it as .corrupt")
                do { try FileSystem.rename(file(for: uid), to: file(for: uid) + ".corrupt") } catch {
                    logger.error("cannot keep it: \(error)")
                }
            }
        }
        cache[uid] = loaded
        return loaded
    }

    func add(_ registration: Registration, for uid: uid_t) throws(RegistrationStoreError) {
        var list = try registrations(for: uid)
        list.removeAll { $0.id == registration.id }
        list.append(registration)
        try save(list, for: uid)
    }

    /// Renames; nil when the user has no such registration.
    func rename(id: String, to name: String, for uid: uid_t) throws(RegistrationStoreError) -> Registration? {
        var list = try registrations(for: uid)
        guard let index = list.firstIndex(where: { $0.id == id }) else { return nil }
        list[index].friendlyName = name
        try save(list, for: uid)
        return list[index]
    }

    /// Deletes; false when the user has no such registration.
    func delete(id: String, for uid: uid_t) throws(RegistrationStoreError) -> Bool {
        var list = try registrations(for: uid)
        guard let index = list.firstIndex(where: { $0.id == id }) else { return false }
        list.remove(at: index)
        try save(list, for: uid)
        return true
    }

    /// Notes an assertion; written with the next batch.
    func recordUse(id: String, signCount: UInt32, at time: Int64, for uid: uid_t) -> Registration? {
        guard var list = try? registrations(for: uid), let index = list.firstIndex(where: { $0.id == id }) else { return nil }
        list[index].signCount = signCount
        list[index].lastUsedAt = time
        cache[uid] = list
        dirtyUsage.insert(uid)
        scheduleUsageFlush()
        return list[index]
    }

    /// Writes pending usage now (at shutdown).
    func flush() {
        for uid in dirtyUsage {
            if let list = cache[uid] { try? save(list, for: uid) }
        }
        dirtyUsage = []
    }

    private func scheduleUsageFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        flushQueue.asyncAfter(deadline: .now() + .milliseconds(Self.usageFlushDelay.wholeMilliseconds)) { [self] in
            flushScheduled = false
            flush()
        }
    }

    private func save(_ list: [Registration], for uid: uid_t) throws(RegistrationStoreError) {
        do throws(SystemError) {
            try AtomicFile.write(try RegistrationFile.encode(list), to: file(for: uid), permissions: 0o600)
        } catch {
            throw .system(error)
        }
        cache[uid] = list
        dirtyUsage.remove(uid)
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
