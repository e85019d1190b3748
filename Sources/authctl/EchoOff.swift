import Glibc

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
    var saved = termios()
    guard tcgetattr(fd, &saved) == 0 else { return nil }
    _ = exitHook
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    quiet.c_lflag |= tcflag_t(ECHONL)
    settingsToRestore = (fd, saved)
    let previousHandlers = endingSignals.map { ($0, signal($0, restoreTerminalAndResignal)) }
    defer {
        _ = tcsetattr(fd, TCSAFLUSH, &saved)
        for (number, handler) in previousHandlers { signal(number, handler) }
        settingsToRestore = nil
    }
    guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else { return nil }
    return body()
}

/// Puts the terminal back, then delivers the signal again with its default
/// action, so the process ends exactly as it would have.
private func restoreTerminalAndResignal(_ number: Int32) {
    restoreTerminal()
    signal(number, SIG_DFL)
    raise(number)
}

/// authctl may also exit while a PIN prompt waits — the daemon timed the
/// request out, or the connection closed — with the reading thread still
/// blocked; the terminal is put back then too.
private let exitHook: Void = {
    atexit { restoreTerminal() }
}()

private func restoreTerminal() {
    guard var saved = settingsToRestore else { return }
    _ = tcsetattr(saved.fd, TCSANOW, &saved.settings)
    // The Enter that would have ended the line never came: end it, so
    // what is written next starts on a line of its own.
    _ = write(saved.fd, "\n", 1)
}
