import SSHSecurityKey
import Testing

@Suite struct AlgorithmTests {
    @Test func openSSHsKeyTypesAreTheirCOSEAlgorithms() {
        #expect(SSHKeyAlgorithm(rawValue: 0)?.coseAlgorithm == -7)
        #expect(SSHKeyAlgorithm(rawValue: 1)?.coseAlgorithm == -8)
        #expect(SSHKeyAlgorithm(rawValue: 2) == nil)
        #expect(SSHKeyAlgorithm(coseAlgorithm: -257) == nil)
    }
}
