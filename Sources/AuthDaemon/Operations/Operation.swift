import AuthProtocol
import Dispatch
import Glibc

/// A credential operation in progress: whose it is, what it is about, how
/// long it may still take, and the steps it takes.
///
/// An operation carries its own steps: a method's handler (Methods/, an
/// `extension Broker`: the routing side) makes the operation and calls
/// them, and each step is an `extension Operation` whose methods take the
/// broker as an `isolated` parameter (`in broker: isolated Broker`), so
/// that they run on the broker's one queue, with its state, and the
/// handler reads `try await operation.withKey(key, in: self) { … }`.
/// Where each step is, so that a new one goes beside its kind:
///
/// - KeyAccess.swift: the key, held (`acquire`, `withKey`) and called
///   (`perform`, `call`), and the `busy` status while another program has it;
/// - KeyRefresh.swift: the key's getInfo read again after a change;
/// - KeyChoice.swift: which key serves (`chooseKey`, the silent `probe`);
///   KeyEligibility.swift: which keys can (`KeyRequirements`);
/// - CredentialChoice.swift: which account, when the key holds several;
/// - UserVerification.swift: fingerprint or PIN (`withUserVerification`,
///   `withPIN`, `askForPIN`);
/// - Prompting.swift: a question to the person behind it (`prompt`), and
///   PromptAnswerers.swift: who answers it, or the default when nobody can;
/// - Statuses.swift: `operation.status` to the requester and its agent;
///   Agents/AgentView.swift: what agents are shown of it.
///
/// A step that only one method takes stays beside that method:
/// `askForName` (Methods/CreateCredential.swift), `withPINIfSet`
/// (Methods/Management.swift), `askForNewPIN` (Methods/PINManagement.swift),
/// the fingerprint samples' status (Methods/Fingerprints.swift),
/// `hmacSecretAttempt` (WebAuthn/PRF.swift), `performPolling` for a key
/// that speaks only U2F (WebAuthn/U2FOnlyKeys.swift).
final class Operation: @unchecked Sendable {
    // Broker-confined, like the session and request it belongs to: it is
    // made in a request's task on the broker, and its steps run there.
    let id: RPCID
    let session: Session
    let request: InFlightRequest
    var info: OperationInfo
    /// The user the operation is for: whose registrations, policy and
    /// agent apply. The caller's own uid, or the user a root caller acts
    /// for (`onBehalfOf`).
    let owner: uid_t

    /// How long it may take is its request's (`InFlightRequest.timeLimit`):
    /// one limit, on one clock, for the request and every call it makes.
    init(id: RPCID, session: Session, request: InFlightRequest, info: OperationInfo, owner: uid_t? = nil) {
        self.id = id
        self.session = session
        self.request = request
        self.info = info
        self.owner = owner ?? session.peer.uid
    }

    /// Time left, at least a millisecond (a timeout of 0 means "forever" to libfido2).
    var remaining: Duration { max(.milliseconds(1), request.deadline.durationFromNow) }

    /// Throws the reason the operation was cancelled, if it was.
    func checkCancelled() throws(RPCError) {
        if let reason = request.cancellation { throw reason }
    }
}
