import Glibc
import SystemKit
import Testing

@Suite struct UserDatabaseTests {
    @Test func rootAndItsGroupResolve() {
        #expect(UserDatabase.userID(named: "root") == 0)
        #expect(UserDatabase.groupID(named: "root") == 0)
    }

    @Test func aNameNobodyHasIsNil() {
        #expect(UserDatabase.userID(named: "no-such-user-authkeyd") == nil)
        #expect(UserDatabase.groupID(named: "no-such-group-authkeyd") == nil)
    }

    /// The look-ups AccessPolicy makes from test threads at once: with
    /// getpwnam's shared buffer, one thread could read another's answer.
    @Test func concurrentLookUpsEachGetTheirOwnAnswer() async {
        let names = ["root", "daemon", "bin", "sys", "nobody"]
        let expected = names.map { UserDatabase.userID(named: $0) }
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<64 {
                group.addTask { names.map { UserDatabase.userID(named: $0) } == expected }
            }
            for await same in group { #expect(same) }
        }
    }
}
