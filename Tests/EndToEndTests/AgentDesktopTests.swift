import AuthProtocol
import Foundation
import Glibc
import TestSupport
import Testing

/// `authctl agent --desktop` in a graphical session with nobody at it
/// (Xvfb, a session bus, dunst): each dialog is waited for by its title,
/// photographed into `.build/agent-screens/` for people to look at (`make
/// agent-screens` copies two into docs/), and answered with xdotool as a
/// person would. The requester is a headless socket client (`ui: []`);
/// what it gets is verified by py_webauthn.
@Suite(.timeLimit(.minutes(4)), .serialized) struct AgentDesktopTests {
    static let screens = repositoryPath(".build/agent-screens")
    static let requesterScript = repositoryPath("Tests/RelyingParty/headless_requester.py")
    /// The PIN key waits 2 s for its touch, so the notification can be seen.
    static let keys = ["--virtual-key", "name=Desk key,pin=1234,presence=after:2s", "--virtual-key", "name=Spare key"]

    /// The desktop agent in `desktop`, registered once it says so.
    static func startAgent(_ daemon: DaemonProcess, in desktop: DesktopSession) throws -> StartedProgram {
        let agent = try StartedProgram(
            builtProduct("authctl"), ["--socket", daemon.socketPath, "agent", "--desktop", "--pinentry", "pinentry-gtk-2"],
            environment: desktop.environment)
        let registered = waitUntil(timeout: .seconds(10)) { agent.standardError.contains("with desktop dialogs") }
        try #require(registered, "the desktop agent did not register: \(agent.standardError)")
        return agent
    }

    static func request(_ daemon: DaemonProcess, _ method: String, _ params: some Encodable) throws -> StartedProgram {
        try StartedProgram("/usr/bin/python3", [requesterScript, daemon.socketPath, method], input: JSONValueEncoder().encode(params).jsonText)
    }

    static func reply(of requester: StartedProgram) throws -> JSONValue {
        let run = requester.finish(within: .seconds(30))
        try #require(run.succeeded, "\(run)")
        return try JSONParser().parse(Array(run.standardOutput.utf8.prefix { $0 != 0x0A }))
    }

    /// Waits for the dialog titled `title`, saves the screen as `screen`,
    /// then answers it.
    static func answer(
        _ title: String, in desktop: DesktopSession, screen: String, with inputs: [DesktopSession.Input] = [.key("Return")]
    ) throws {
        let window = try #require(desktop.waitForWindow(titled: title), "no dialog titled \"\(title)\" showed")
        // The dialog draws itself after it maps.
        blockingSleep(.milliseconds(400))
        try desktop.screenshot(to: "\(screens)/\(screen).png")
        try desktop.answer(window, with: inputs)
        #expect(desktop.waitForWindowToClose(window, titled: title), "the dialog \"\(title)\" stayed after its answer")
    }

    @Test func everyDialogAnswersAHeadlessRequesterAndTheResultsVerify() async throws {
        try #require(DesktopSession.missingPrograms.isEmpty, "missing \(DesktopSession.missingPrograms): scripts/install-deps installs them")
        try #require(RelyingPartyVerifier.isAvailable, "run scripts/rp-venv (make test does)")
        let desktop = try DesktopSession()
        let daemon = try DaemonProcess(Self.keys)
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(2)
        let agent = try Self.startAgent(daemon, in: desktop)

        // A registration: which key (zenity's list), its PIN (pinentry),
        // the touch (a notification), the key's name (zenity's entry).
        let challenge = randomHash()
        let registering = try Self.request(
            daemon, Method.createCredential, WebAuthnFixtures.createParams(challenge: challenge, residentKey: .required))
        // The list starts with "touch the key you mean"; the Desk key is next.
        try Self.answer("authkeyd: choose a security key", in: desktop, screen: "1-choose-key", with: [.key("Down"), .key("Return")])
        try Self.answer("authkeyd", in: desktop, screen: "2-pin", with: [.text("1234"), .key("Return")])
        let notified = waitUntil(timeout: .seconds(5)) { desktop.notificationTraffic.contains("Touch your security key") }
        #expect(notified, "no touch notification was posted: \(desktop.notificationTraffic)")
        blockingSleep(.milliseconds(500))
        try desktop.screenshot(to: "\(Self.screens)/3-touch-notification.png")
        try Self.answer(
            "authkeyd: name your security key", in: desktop, screen: "4-name-key", with: [.key("ctrl+a"), .text("Desk key at work"), .key("Return")])
        let created = try Self.reply(of: registering)
        let credential = try #require(created["result"]?["credential"], "\(created)")
        #expect(created["result"]?["registration"]?["friendlyName"] == "Desk key at work", "\(created)")
        let registered = try RelyingPartyVerifier.verify("register", [
            "credential": credential, "challenge": .string(Base64URL.encode(challenge)), "origin": "https://example.org",
            "rpId": "example.org",
        ]).get()
        // dunst says it closed the cue (NotificationClosed), which it does
        // only for a notification it shows.
        let closed = waitUntil(timeout: .seconds(5)) { desktop.notificationTraffic.contains("member=NotificationClosed") }
        #expect(closed, "the touch cue stayed: \(desktop.notificationTraffic)")

        // A second account on the same key (the first in the list, which
        // the dialog had chosen: the assertion below finds alice there), made by a client that answers
        // its own prompts, so that the assertion below offers a choice.
        let other = try daemon.client()
        other.setUI(ScriptedUI(pins: ["1234"]))
        _ = try await other.createCredential(WebAuthnFixtures.createParams(
            user: "bob", userID: Array("user-bob".utf8), residentKey: .required, authenticator: "v1"))

        // An assertion with a transaction: Sign/Cancel (pinentry), the PIN,
        // then the account (zenity's list, newest first: alice is the second row).
        let assertionChallenge = randomHash()
        let asserting = try Self.request(
            daemon, Method.getCredential,
            WebAuthnFixtures.getParams(
                challenge: assertionChallenge, userVerification: .required, authenticator: "v1",
                transaction: ["Payee": "Bob's Bikes", "Amount": "42.00 EUR"]))
        // pinentry's confirmation starts on Cancel, so that a stray Return
        // signs nothing: Tab to Sign.
        try Self.answer("authkeyd: sign this?", in: desktop, screen: "5-transaction", with: [.key("Tab"), .key("Return")])
        try Self.answer("authkeyd", in: desktop, screen: "6-pin-again", with: [.text("1234"), .key("Return")])
        try Self.answer("authkeyd: choose an account", in: desktop, screen: "7-choose-account", with: [.key("Down"), .key("Return")])
        let asserted = try Self.reply(of: asserting)
        let assertion = try #require(asserted["result"]?["credential"], "\(asserted)")
        #expect(assertion["id"] == credential["id"], "alice's credential was chosen: \(asserted)")
        let verified = try RelyingPartyVerifier.verify("authenticate", [
            "credential": assertion, "challenge": .string(Base64URL.encode(assertionChallenge)), "origin": "https://example.org",
            "rpId": "example.org", "publicKey": try #require(registered["publicKey"]),
        ])
        if case .failure(let failure) = verified { Issue.record("py_webauthn refused the assertion: \(failure)") }

        agent.signal(SIGTERM)
        let log = agent.finish(within: .seconds(5)).standardError
        #expect(log.contains("python3 (pid \(registering.pid)"), "the agent's log names the requester: \(log)")
        #expect(!log.contains("1234"), "a PIN reached the agent's log:\n\(log)")
        #expect(!daemon.log.contains("1234"), "a PIN reached the daemon's log")
    }

    @Test func aRequesterThatDiesClosesItsDialog() async throws {
        try #require(DesktopSession.missingPrograms.isEmpty, "missing \(DesktopSession.missingPrograms): scripts/install-deps installs them")
        let desktop = try DesktopSession()
        let daemon = try DaemonProcess(["--virtual-key", "name=Desk key,pin=1234"])
        defer { _ = daemon.stop() }
        _ = try await daemon.waitForKeys(1)
        let agent = try Self.startAgent(daemon, in: desktop)
        let doomed = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        try #require(desktop.waitForWindow(titled: "authkeyd") != nil, "no PIN dialog showed")
        doomed.signal(SIGKILL)
        #expect(desktop.waitForWindowToClose(titled: "authkeyd", timeout: .seconds(5)), "the PIN dialog of a dead requester stayed")
        #expect(waitUntil(timeout: .seconds(5)) { agent.standardError.contains(": cancelled: ") }, "\(agent.standardError)")
        // The agent goes on: the next request's dialog shows; a wrong PIN
        // is asked again, with the key's count of attempts left.
        let next = try Self.request(daemon, Method.createCredential, WebAuthnFixtures.createParams(residentKey: .required))
        try Self.answer("authkeyd", in: desktop, screen: "8-pin-wrong", with: [.text("9999"), .key("Return")])
        try Self.answer("authkeyd", in: desktop, screen: "9-pin-retry", with: [.text("1234"), .key("Return")])
        try Self.answer("authkeyd: name your security key", in: desktop, screen: "10-name-key-again")
        #expect(try Self.reply(of: next)["result"] != nil)
        #expect(agent.standardError.components(separatedBy: "asking to PIN").count - 1 == 3, "\(agent.standardError)")
    }
}
