import Glibc

/// Look-ups in the system's user and group databases (NSS), through the
/// reentrant `getpwnam_r`/`getgrnam_r`: the plain calls return a pointer
/// into one static buffer that another thread's look-up may overwrite.
public enum UserDatabase {
    /// The uid of the user called `name`; nil when there is none (or the
    /// database cannot be read).
    public static func userID(named name: String) -> uid_t? {
        lookUp(sizeHint: Int(_SC_GETPW_R_SIZE_MAX)) { (entry: UnsafeMutablePointer<passwd>, buffer, size, result) in
            getpwnam_r(name, entry, buffer, size, &result)
        } keeping: { $0.pw_uid }
    }

    /// A user's account: what access policy is decided on.
    public struct Account: Sendable, Equatable {
        public var name: String
        public var uid: uid_t
        public var gid: gid_t
        public var home: String
        /// Every group the user is in, the primary one included (`getgrouplist`).
        public var groups: [gid_t]
    }

    /// The account called `name`; nil when there is none.
    public static func account(named name: String) -> Account? {
        let entry = lookUp(sizeHint: Int(_SC_GETPW_R_SIZE_MAX)) { (entry: UnsafeMutablePointer<passwd>, buffer, size, result) in
            getpwnam_r(name, entry, buffer, size, &result)
        } keeping: { (uid: $0.pw_uid, gid: $0.pw_gid, home: String(cString: $0.pw_dir)) }
        guard let entry else { return nil }
        return Account(name: name, uid: entry.uid, gid: entry.gid, home: entry.home, groups: groups(of: name, primary: entry.gid))
    }

    /// The account whose uid is `uid`; nil when there is none.
    public static func account(uid: uid_t) -> Account? {
        let name = lookUp(sizeHint: Int(_SC_GETPW_R_SIZE_MAX)) { (entry: UnsafeMutablePointer<passwd>, buffer, size, result) in
            getpwuid_r(uid, entry, buffer, size, &result)
        } keeping: { String(cString: $0.pw_name) }
        return name.flatMap { account(named: $0) }
    }

    /// The groups `name` is in (`getgrouplist`), growing the list while it is too short.
    private static func groups(of name: String, primary: gid_t) -> [gid_t] {
        var count: Int32 = 32
        while count <= 65_536 {
            var groups = [gid_t](repeating: 0, count: Int(count))
            var found = count
            if getgrouplist(name, primary, &groups, &found) != -1 { return Array(groups.prefix(Int(found))) }
            count = max(found, count * 2)
        }
        return [primary]
    }

    /// The gid of the group called `name`; nil when there is none.
    public static func groupID(named name: String) -> gid_t? {
        lookUp(sizeHint: Int(_SC_GETGR_R_SIZE_MAX)) { (entry: UnsafeMutablePointer<group>, buffer, size, result) in
            getgrnam_r(name, entry, buffer, size, &result)
        } keeping: { $0.gr_gid }
    }

    /// Calls a `get…_r` function with a buffer that grows while it reports
    /// ERANGE (a group with many members needs more than the hint). The
    /// entry's strings point into the buffer, freed on return, so `keeping`
    /// picks out what is kept while the buffer is still there.
    private static func lookUp<Entry, Kept>(
        sizeHint: Int,
        _ call: (UnsafeMutablePointer<Entry>, UnsafeMutablePointer<CChar>, Int, inout UnsafeMutablePointer<Entry>?) -> Int32,
        keeping: (Entry) -> Kept
    ) -> Kept? {
        var size = max(sysconf(Int32(sizeHint)), 1024)
        while size <= 1 << 20 {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let entry = UnsafeMutablePointer<Entry>.allocate(capacity: 1)
            defer { entry.deallocate() }
            var result: UnsafeMutablePointer<Entry>?
            let status = call(entry, buffer, size, &result)
            if status == ERANGE {
                size *= 2
                continue
            }
            guard status == 0, let found = result else { return nil }
            return keeping(found.pointee)
        }
        return nil
    }
}

/// This machine's name (`gethostname`), as pam_u2f puts it in its default
/// origin `pam://NAME`; "localhost" if it cannot be read.
public func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
