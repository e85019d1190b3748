import Glibc

/// A C function run when a signal arrives; nil is the default action (`SIG_DFL`).
public typealias SignalHandler = @convention(c) (Int32) -> Void

/// Sets what `number` does when it arrives (`signal(2)`), and returns what
/// it did before, to be put back. Async-signal-safe: a handler may call it.
///
/// It fails only for a number that is no signal, or one that cannot be
/// caught (SIGKILL, SIGSTOP): a bug in the caller, so it stops there.
@discardableResult
public func setSignalHandler(_ number: Int32, _ handler: SignalHandler?) -> SignalHandler? {
    let previous = signal(number, handler)
    precondition(previous.map { unsafeBitCast($0, to: Int.self) } != -1, "signal: \(number) cannot be handled")
    return previous
}
