import Dispatch

/// Runs `work` once `delay` has passed, on a thread of its own, as a user
/// or a UI acting from elsewhere would.
///
/// Not `DispatchQueue.global().asyncAfter`: that pool has about one thread
/// per core, the blocking tests running beside this one can hold them all,
/// and a 200 ms timer there fires seconds late. A serial queue targets
/// libdispatch's overcommitting pool, which always finds a thread.
public func runLater(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
    let (seconds, attoseconds) = delay.components
    let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    DispatchQueue(label: "authkeyd.tests.run-later").asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: work)
}
