import Glibc
import SystemKit

/// Who is on the other end of a connection: the kernel's word at connect time.
public struct PeerIdentity: Sendable, Equatable {
    public var uid: uid_t
    public var gid: gid_t
    public var pid: pid_t
    public var groups: [gid_t]

    public init(uid: uid_t, gid: gid_t, pid: pid_t, groups: [gid_t]) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.groups = groups
    }

    /// Reads SO_PEERCRED and SO_PEERGROUPS.
    init(socket fd: Int32) throws(SystemError) {
        let credentials = try PeerCredentials(socket: fd)
        let groups = (try? peerGroups(socket: fd)) ?? []
        self.init(uid: credentials.uid, gid: credentials.gid, pid: credentials.pid, groups: groups)
    }
}

/// What a connection may do.
public struct Rights: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// List keys, register, authenticate, list a key's credentials.
    public static let use = Rights(rawValue: 1)
    /// PIN, reset, deleting and updating on-key credentials, fingerprints,
    /// config.
    public static let manage = Rights(rawValue: 2)
}

/// Decides each connection's rights from its peer identity (fprintd's
/// idea: every action its own default; here, using a key and managing one).
public struct AccessPolicy: Sendable, Equatable {
    enum Principal: Equatable, Sendable {
        case everyone
        case user(uid_t)
        case group(gid_t)
    }

    let users: [Principal]
    let admins: [Principal]
    /// Names that did not resolve, for a warning.
    public let unresolved: [String]

    /// Resolves `root`, `1000`, `@plugdev`, `*` against the system's databases.
    public init(allowUsers: [String], allowAdmins: [String]) {
        var unresolved: [String] = []
        func resolve(_ names: [String]) -> [Principal] {
            names.compactMap { name in
                if name == "*" { return .everyone }
                if name.hasPrefix("@") {
                    let group = String(name.dropFirst())
                    if let gid = gid_t(group) { return .group(gid) }
                    if let gid = UserDatabase.groupID(named: group) { return .group(gid) }
                } else {
                    if let uid = uid_t(name) { return .user(uid) }
                    if let uid = UserDatabase.userID(named: name) { return .user(uid) }
                }
                unresolved.append(name)
                return nil
            }
        }
        users = resolve(allowUsers)
        admins = resolve(allowAdmins)
        self.unresolved = unresolved
    }

    public func rights(for peer: PeerIdentity) -> Rights {
        var rights: Rights = []
        if Self.matches(admins, peer) { rights.formUnion([.use, .manage]) }
        if Self.matches(users, peer) { rights.insert(.use) }
        return rights
    }

    static func matches(_ principals: [Principal], _ peer: PeerIdentity) -> Bool {
        principals.contains { principal in
            switch principal {
            case .everyone: return true
            case .user(let uid): return peer.uid == uid
            case .group(let gid): return peer.gid == gid || peer.groups.contains(gid)
            }
        }
    }

    /// The socket file's mode and group that let in the users the policy
    /// names: group-accessible for the first group named, the owner's alone
    /// when only the owner is named. Naming `*` or another user's uid opens
    /// the file to everyone, and the daemon's own check at accept does the
    /// refusing.
    public func socketPermissions(owner: uid_t = geteuid()) -> (mode: mode_t, group: gid_t?) {
        let everyone = (users + admins).contains { principal in
            switch principal {
            case .everyone: return true
            case .user(let uid): return uid != owner && uid != 0
            case .group: return false
            }
        }
        if everyone { return (0o666, nil) }
        let groups = (users + admins).compactMap { principal -> gid_t? in
            if case .group(let gid) = principal { return gid }
            return nil
        }
        if let group = groups.first { return (0o660, group) }
        return (0o600, nil)
    }
}
