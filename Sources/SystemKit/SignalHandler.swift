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

/// Writing to a pipe whose reader has gone fails with EPIPE instead of
/// killing the process with SIGPIPE: for a program that talks to helpers
/// over pipes (the desktop agent's pinentry), whose death is an answer
/// ("cancelled"), not a reason to die. Children started by `ChildProcess`
/// get the default back.
public func ignoreBrokenPipes() {
    _ = signal(SIGPIPE, SIG_IGN)
}
