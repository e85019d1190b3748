import AuthClient
import AuthProtocol

/// How a session agent (`authctl agent`) asks its user: the terminal it
/// runs on, or the desktop's dialogs. The prompts are `AuthenticatorUI`'s;
/// each one's `operation.requester` says which program asks, and
/// `operation.request` is the daemon's name for the request (`op-N`),
/// which the notices below repeat.
///
/// A prompt runs in a task of its own, cancelled when the daemon says its
/// request was cancelled (`operation.cancelled`): a front end then stops
/// asking (closes its dialog, abandons the terminal question) and returns
/// nil, which the daemon no longer waits for.
protocol AgentFrontEnd: AuthenticatorUI {
    /// The daemon took this agent for `uid`'s requests.
    func registered(uid: Int)
    /// A newer agent, process `pid`, took this one's place; the agent ends.
    func replaced(by pid: Int)
    /// A request the agent was shown was cancelled (its requester went
    /// away, gave up or timed out): whatever it showed of it is void.
    func cancelled(_ notice: OperationCancelled)
    /// A request the agent was shown is over.
    func finished(_ notice: OperationFinished)
    /// Something about the agent itself, a sentence without its full stop:
    /// the daemon exited and will call it back, called it back, cannot.
    func notice(_ text: String)
}
