internal import CSystem

/// `PR_SET_DUMPABLE`: whether core dumps and same-uid ptrace may read this
/// process's memory.
@discardableResult
public func setProcessDumpable(_ dumpable: Bool) -> Bool {
    authkeyd_set_dumpable(dumpable ? 1 : 0) == 0
}
