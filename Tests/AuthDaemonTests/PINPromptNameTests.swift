import AuthClient
import AuthProtocol
import BrokerTestSupport
import TestSupport
import Testing

/// A PIN prompt names the key as the key chooser does: the name the user
/// gave it at registration (`ui.describeAuthenticator`), or that a
/// registration's friendlyName labels it with, else its product; and the
/// words every front end builds the prompt from (`PINPromptWording`) use
/// that name.
@Suite(.timeLimit(.minutes(2))) struct PINPromptNameTests {
    static func work(_ name: String?) -> Authenticator {
        Authenticator(
            id: "u1", path: "/dev/hidraw0", transport: .usb, manufacturer: "Yubico", product: "YubiKey 5 NFC", vendorId: 0x1050,
            productId: 0x0407, aaguid: "", name: name, pin: true, pinSet: true, uv: false, uvSet: false, rk: true, credMgmt: true,
            bioEnroll: false, alwaysUv: false)
    }

    @Test func theWordingNamesTheKeyByItsNameElseItsProduct() {
        #expect(Self.work("Work YubiKey").displayName == "Work YubiKey")
        #expect(Self.work(nil).displayName == "YubiKey 5 NFC")
        #expect(Self.work("").displayName == "YubiKey 5 NFC", "an empty name is no name")
        let key = Self.work("Work YubiKey")
        #expect(PINPromptWording.question(.required, for: key, retries: 8, changing: false) == "PIN for Work YubiKey (8 attempts left): ")
        #expect(PINPromptWording.question(.invalid, for: key, retries: 1, changing: false) == "PIN for Work YubiKey (1 attempt left): ")
        #expect(PINPromptWording.question(.current, for: key, retries: nil, changing: true) == "Current PIN for Work YubiKey: ")
        #expect(PINPromptWording.question(.invalid, for: key, retries: 7, changing: true) == "Current PIN for Work YubiKey (7 attempts left): ")
        #expect(PINPromptWording.newPINQuestion(for: key, minimumLength: 4) == "New PIN for Work YubiKey (at least 4 characters): ")
        #expect(PINPromptWording.question(.required, for: Self.work(nil), retries: nil, changing: false) == "PIN for YubiKey 5 NFC: ")
        #expect(PINPromptWording.question(.required, for: Self.work("a\u{1B}b"), retries: nil, changing: false) { $0.uppercased() }
            == "PIN for A\u{1B}B: ", "the name passes through what the terminal makes printable")
    }

    /// Named "Work YubiKey" at registration, the key is asked its PIN by
    /// that name next time.
    @Test func aKeyNamedAtRegistrationIsAskedItsPINByThatName() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=YubiKey 5,pin=1234"])
        let client = try daemon.client()
        let ui = ScriptedUI(pins: ["1234", "1234"], name: "Work YubiKey")
        client.setUI(ui)
        let created = try await client.createCredential(WebAuthnFixtures.createParams(userVerification: .required))
        let id = try #require(created.credential["id"]?.stringValue)
        #expect(ui.pinRequests.first?.authenticator.name == nil, "not named yet when registering")

        _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: [id], userVerification: .required))
        let asked = try #require(ui.pinRequests.last)
        #expect(asked.authenticator.name == "Work YubiKey" && asked.authenticator.product == "YubiKey 5")
        #expect(PINPromptWording.question(asked.reason, for: asked.authenticator, retries: asked.retries, changing: false)
            == "PIN for Work YubiKey (8 attempts left): ")
    }

    /// Two keys, neither named (the user declined), one registration
    /// renamed "Work YubiKey": the chooser offers that key by the name, and
    /// the PIN prompt that follows carries it too.
    @Test func aKeyLabelledByARegistrationIsAskedItsPINByThatNameAsTheChooserShowsIt() async throws {
        let daemon = try await InProcessBroker(["--virtual-key", "name=YubiKey 5,pin=1234", "--virtual-key", "name=Other Key,pin=1234"])
        let client = try daemon.client()
        let ui = ScriptedUI(choice: .authenticator(id: "v1"), pins: ["1234", "1234", "1234"])
        client.setUI(ui)
        var ids: [String] = []
        for key in ["v1", "v2"] {
            let created = try await client.createCredential(WebAuthnFixtures.createParams(userVerification: .required, authenticator: key))
            ids.append(try #require(created.registration?.id))
        }
        _ = try await client.renameRegistration(id: ids[0], to: "Work YubiKey")

        _ = try await client.getCredential(WebAuthnFixtures.getParams(allow: ids, userVerification: .required))
        let offered = try #require(ui.offeredKeys.last)
        #expect(offered.map(\.displayName) == ["Work YubiKey", "Other Key"], "the chooser: \(offered.map(\.displayName))")
        #expect(ui.pinRequests.last?.authenticator.displayName == "Work YubiKey")
    }
}
