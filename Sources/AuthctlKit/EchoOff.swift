import Glibc
import SystemKit

/// The terminal and its settings to put back if a signal ends authctl
/// while echo is off. A signal handler can reach only globals; this one is
/// set before the handlers are installed and cleared after they are removed.
nonisolated(unsafe) private var settingsToRestore: (fd: Int32, settings: termios)?

/// The signals that end a process at the terminal: each must leave echo on.
private let endingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

/// Runs `body` with the terminal's echo off (the typed line still ends with
/// a visible newline), and turns echo back on afterwards — on every path,
/// including Ctrl-C: the handlers restore the terminal, then let the signal
/// do what it would have done. nil, without running `body`, if the terminal
/// cannot be set: a secret is never read with echo on.
func withEchoOff<T>(_ fd: Int32, _ body: () -> T) -> T? {
    guard let saved = try? TerminalSettings.current(fd) else { return nil }
    _ = exitHook
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    quiet.c_lflag |= tcflag_t(ECHONL)
    settingsToRestore = (fd, saved)
    let previousHandlers = endingSignals.map { ($0, setSignalHandler($0, restoreTerminalAndResignal)) }
    defer {
        // A terminal gone meanwhile has no echo to put back.
        try? TerminalSettings.set(fd, saved, .afterOutputDroppingInput)
        for (number, handler) in previousHandlers { setSignalHandler(number, handler) }
        settingsToRestore = nil
    }
    guard (try? TerminalSettings.set(fd, quiet, .afterOutputDroppingInput)) != nil else { return nil }
    return body()
}

/// Puts the terminal back, then delivers the signal again with its default
/// action, so the process ends exactly as it would have.
private func restoreTerminalAndResignal(_ number: Int32) {
    restoreTerminal()
    setSignalHandler(number, nil)
    raise(number)
}

/// authctl may also exit while a PIN prompt waits — the daemon timed the
/// request out, or the connection closed — with the reading thread still
/// blocked; the terminal is put back then too.
private let exitHook: Void = {
    atexit { restoreTerminal() }
}()

private func restoreTerminal() {
    // In a signal handler: nothing here allocates, and a failure has no one
    // to be reported to (the process is ending).
    guard let saved = settingsToRestore else { return }
    try? TerminalSettings.set(saved.fd, saved.settings, .now)
    // The Enter that would have ended the line never came: end it, so
    // what is written next starts on a line of its own.
    _ = StaticString("\n").withUTF8Buffer { try? FileDescriptor.write(saved.fd, UnsafeRawBufferPointer($0)) }
}
