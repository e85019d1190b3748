/// The PAM conversation, as the module uses it: the application (sudo,
/// login, a screen locker) shows the text and reads the answer. The calls
/// block until the application returns.
public protocol Conversation: Sendable {
    /// `PAM_PROMPT_ECHO_OFF`: the answer typed, nil when the application
    /// gave none (the user cancelled, or there is nobody to ask).
    func askHidden(_ prompt: String) -> String?
    /// `PAM_TEXT_INFO`: a line for the user (the touch cue).
    func inform(_ text: String)
}

/// Where the module writes what happened: syslog, and `debug_file=`.
public protocol ModuleLog: Sendable {
    /// A step, written only with `debug`.
    func debug(_ line: String)
    /// Something an administrator should see: always written.
    func error(_ line: String)
}
