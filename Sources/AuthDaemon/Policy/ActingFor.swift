import AuthProtocol
import Glibc
import SystemKit

extension Broker {
    /// The uid a request is for: the caller's own, or (`onBehalfOf`) the
    /// user a privileged caller acts for. The PAM module runs as root
    /// inside sudo or login for the user being authenticated; the policy,
    /// the registrations and the session agent must be that user's, not
    /// root's.
    ///
    /// Only root and authkeyd's admins (`allow-admins`) may act for
    /// another user: anyone else could otherwise have prompts shown to a
    /// user who did not ask. The user acted for must be allowed to use
    /// the keys themselves. Each grant is logged with who asked for whom.
    ///
    /// The caller's right is checked at once (`mayActFor`, before the
    /// request starts); the user is looked up here, in the request's task,
    /// on a thread of its own: NSS may ask LDAP or sssd, and a slow answer
    /// must hold up this request only, not the broker's queue. No cache:
    /// the answer is the system's at the time of the request, as PAM's is.
    func owner(actingFor name: String?, session: Session, method: String) async throws(RPCError) -> uid_t {
        guard let name else { return session.peer.uid }
        try mayActFor(name, session: session)
        guard let account = await runOnOwnThread({ UserDatabase.account(named: name) }) else {
            throw RPCError(.invalidParams, "invalid params: onBehalfOf: no user \(String(reflecting: name))")
        }
        let rights = policy.rights(for: PeerIdentity(uid: account.uid, gid: account.gid, pid: 0, groups: account.groups))
        guard rights.contains(.use) else {
            throw RPCError(.permissionDenied, "onBehalfOf: user \(account.name) may not use authkeyd (see allow-users in authkeyd.conf(5))")
        }
        let command = session.requester.command
        logger.notice(
            "uid \(session.peer.uid) (pid \(session.peer.pid), \(String(reflecting: command))) acts for \(account.name) (uid \(account.uid)): \(method)")
        return account.uid
    }

    /// Refuses `onBehalfOf` to a caller that is neither root nor an admin.
    func mayActFor(_ name: String?, session: Session) throws(RPCError) {
        guard let name, session.peer.uid != 0, !session.rights.contains(.manage) else { return }
        logger.notice("refused onBehalfOf \(String(reflecting: name)) from uid \(session.peer.uid) (pid \(session.peer.pid)): neither root nor an admin")
        throw RPCError(.permissionDenied, "onBehalfOf: only root and authkeyd's admins (allow-admins) may act for another user")
    }
}
