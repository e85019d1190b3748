import PAMAuthkeyd
import Testing

@Suite struct ModuleOptionsTests {
    @Test func pamU2FsOptionsAreReadWithTheirMeanings() {
        let options = ModuleOptions(arguments: [
            "authfile=/etc/u2f_mappings", "origin=pam://example", "appid=pam://example", "cue", "cue_prompt=Tap it",
            "nouserok", "userpresence=0", "userverification=1", "pinverification=7", "debug", "socket=/tmp/a.sock",
            "openasuser", "max_devices=0", "frobnicate",
        ])
        #expect(options.authFile == "/etc/u2f_mappings")
        #expect(options.relyingParty(hostName: "ignored") == "pam://example")
        #expect(options.appID == "pam://example")
        #expect(options.cue && options.cuePrompt == "Tap it" && options.noUserOK && options.debug && options.openAsUser)
        #expect(options.userPresence == .off && options.userVerification == .on && options.pinVerification == .unset)
        #expect(options.socketPath == "/tmp/a.sock")
        #expect(options.maxDevices == 24, "0 means the default, as in pam_u2f")
        #expect(options.unknown == ["frobnicate"])
    }

    @Test func theDefaultsArePamU2FsAndTheSystemSocket() {
        let options = ModuleOptions(arguments: [])
        #expect(options.relyingParty(hostName: "box") == "pam://box")
        #expect(options.socketPath == "/run/authkeyd/authkeyd.sock")
        #expect(!options.cue && !options.noUserOK && options.maxDevices == 24)
    }
}
