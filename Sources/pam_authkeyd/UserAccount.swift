import CPAM
import Glibc

/// The account being authenticated, from libpam's own look-up
/// (`pam_modutil_getpwnam`, which keeps the entry with the handle).
struct UserAccount {
    let name: String
    let uid: uid_t
    let home: String
    /// The entry libpam keeps, for dropping privileges to the user.
    let entry: UnsafePointer<passwd>

    init?(handle: OpaquePointer, name: String) {
        guard let entry = pam_modutil_getpwnam(handle, name), let home = entry.pointee.pw_dir else { return nil }
        let directory = String(cString: home)
        // pam_u2f refuses a home that is not an absolute path, and so do we.
        guard directory.hasPrefix("/") else { return nil }
        self.name = name
        uid = entry.pointee.pw_uid
        self.home = directory
        self.entry = UnsafePointer(entry)
    }
}
