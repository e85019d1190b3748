import AuthProtocol
import Testing

/// The rules an agent's callback name and token follow, which the agent
/// makes them by and the daemon checks them with.
@Suite struct AgentCallbackRuleTests {
    @Test func namesArePrefixedShortAndPlain() {
        #expect(AgentCallback.problem(withName: "authkeyd-agent.1000.0f3a_b-c") == nil)
        #expect(AgentCallback.problem(withName: "authkeyd-agent.") != nil, "nothing after the prefix")
        #expect(AgentCallback.problem(withName: "/tmp/.X11-unix/X0") != nil, "another program's socket")
        #expect(AgentCallback.problem(withName: "authkeyd-agent.a b") != nil)
        #expect(AgentCallback.problem(withName: "authkeyd-agent.\u{0}x") != nil)
        #expect(AgentCallback.problem(withName: "authkeyd-agent.é") != nil)
        let longest = "authkeyd-agent." + String(repeating: "x", count: AgentCallback.maxNameLength - 15)
        #expect(AgentCallback.problem(withName: longest) == nil)
        #expect(AgentCallback.problem(withName: longest + "x")?.contains("at most 100 bytes") == true)
    }

    @Test func tokensAreSixtyFourLowercaseHexDigitsAndNeverRepeated() {
        let token = AgentCallback.token(from: Array(0..<32))
        #expect(token == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        #expect(AgentCallback.problem(withToken: token) == nil)
        for bad in [String(token.dropLast()), token.uppercased(), token + "0", String(token.dropLast()) + "g"] {
            let problem = AgentCallback.problem(withToken: bad)
            #expect(problem != nil && problem?.contains(bad) == false, "\(bad)")
        }
    }

    @Test func tokensMatchOnlyWhenEqual() {
        let token = AgentCallback.token(from: Array(repeating: 0xAB, count: 32))
        #expect(AgentCallback.tokensMatch(token, token))
        #expect(!AgentCallback.tokensMatch(token, String(token.dropLast()) + "a"))
        #expect(!AgentCallback.tokensMatch(token, String(token.dropLast())))
        #expect(!AgentCallback.tokensMatch("", token))
    }
}
