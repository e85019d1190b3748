import Glibc

/// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's
/// Glibc module does not declare (it is a _GNU_SOURCE name): the child
/// starts with no descriptor from `lowest` up, whatever other threads of
/// the test process have open at that instant without close-on-exec.
func closeFrom(_ lowest: Int32, in actions: inout posix_spawn_file_actions_t) -> Int32 {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return -1 }
    return unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
}

/// `POSIX_SPAWN_SETSID` (glibc 2.26): the child calls setsid(2). A
/// _GNU_SOURCE name too, so not in Swift's Glibc module; the value is
/// glibc's, from <spawn.h>.
let posixSpawnSetSID: Int32 = 0x80
