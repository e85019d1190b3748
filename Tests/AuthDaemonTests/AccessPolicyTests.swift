import AuthDaemon
import Testing

@Suite struct AccessPolicyTests {
    @Test func usersGroupsAndAdmins() {
        let policy = AccessPolicy(allowUsers: ["root", "@100", "1500"], allowAdmins: ["root", "@27"])
        #expect(policy.rights(for: PeerIdentity(uid: 0, gid: 0, pid: 1, groups: [])) == [.use, .manage])
        #expect(policy.rights(for: PeerIdentity(uid: 1500, gid: 1500, pid: 1, groups: [])) == [.use])
        #expect(policy.rights(for: PeerIdentity(uid: 1600, gid: 1600, pid: 1, groups: [100])) == [.use])
        #expect(policy.rights(for: PeerIdentity(uid: 1601, gid: 100, pid: 1, groups: [])) == [.use], "primary group counts")
        #expect(policy.rights(for: PeerIdentity(uid: 1602, gid: 1602, pid: 1, groups: [27])) == [.use, .manage])
        #expect(policy.rights(for: PeerIdentity(uid: 1603, gid: 1603, pid: 1, groups: [5])) == [])
    }

    @Test func unknownNamesAreReportedNotGuessed() {
        let policy = AccessPolicy(allowUsers: ["no-such-user-xyz", "@no-such-group-xyz", "*"], allowAdmins: [])
        #expect(policy.unresolved == ["no-such-user-xyz", "@no-such-group-xyz"])
        #expect(policy.rights(for: PeerIdentity(uid: 4242, gid: 4242, pid: 1, groups: [])) == [.use])
    }

    @Test func socketPermissionsFollowThePolicy() {
        #expect(AccessPolicy(allowUsers: ["root"], allowAdmins: ["root"]).socketPermissions(owner: 0) == (0o600, nil))
        let group = AccessPolicy(allowUsers: ["root", "@100"], allowAdmins: ["root"]).socketPermissions(owner: 0)
        #expect(group.mode == 0o660 && group.group == 100)
        #expect(AccessPolicy(allowUsers: ["*"], allowAdmins: []).socketPermissions(owner: 0).mode == 0o666)
        #expect(AccessPolicy(allowUsers: ["1500"], allowAdmins: []).socketPermissions(owner: 0).mode == 0o666)
        #expect(AccessPolicy(allowUsers: ["1500"], allowAdmins: ["1500"]).socketPermissions(owner: 1500).mode == 0o600)
    }
}
