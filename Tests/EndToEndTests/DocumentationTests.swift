import AuthProtocol
import Foundation
import TestSupport
import Testing
import VirtualKey

/// The man pages and shell completions name everything the code has. The
/// lists come from the code at test time — the protocol's own lists, the
/// members of its types, the cases of its enums as the sources declare
/// them, and what the built `authkeyd`, `authctl` and `authkeyd-virtkey`
/// print for `--help` — so that a method, member, prompt, status, flag,
/// setting or subcommand added without its documentation fails here.
/// The completions are checked by the shells themselves: bash, zsh and
/// fish complete each command line, and must offer every command,
/// subcommand and option.
@Suite(.timeLimit(.minutes(3))) struct DocumentationTests {
    // MARK: authkeyd-protocol(7)

    @Test func theProtocolPageHasEveryMethodNotificationPromptAndErrorReason() throws {
        let page = try ManPage("authkeyd-protocol.7")
        // Each is a tag of its own: a line that starts with the name.
        for name in Method.clientMethods + Method.notifications + Prompt.Kind.allCases.map(\.method) {
            #expect(page.hasTag(name), "authkeyd-protocol(7) does not describe \(name)")
        }
        // Each reason in the table, on one line with its JSON-RPC code.
        for reason in ErrorReason.allCases {
            let listed = page.lines.contains { $0.words.first == reason.rawValue && $0.words.dropFirst().first == String(reason.code) }
            #expect(listed, "authkeyd-protocol(7) has no line \"\(reason.rawValue) \(reason.code)\" in its table of error reasons")
        }
    }

    /// The words a client sends and switches on: each status of
    /// `operation.status`, each `reason` of `ui.enterPin`, each operation
    /// type and each transport, as the sources declare them.
    @Test func theProtocolPageHasEveryStatusPINReasonOperationTypeAndTransport() throws {
        let page = try ManPage("authkeyd-protocol.7")
        let statuses = try SwiftSource("Sources/AuthProtocol/Wire/Methods.swift").cases(of: "Status")
        #expect(statuses.count >= 6 && statuses.allSatisfy { OperationStatus.Status(rawValue: $0) != nil }, "read: \(statuses)")
        let statusEntry = page.entry("operation.status")
        for status in statuses {
            #expect(statusEntry.hasTag(status), "authkeyd-protocol(7) does not describe the status \(status) under operation.status")
        }
        let reasons = try SwiftSource("Sources/AuthProtocol/Wire/Prompts.swift").cases(of: "Reason")
        #expect(reasons.count >= 5 && reasons.allSatisfy { EnterPinPrompt.Reason(rawValue: $0) != nil }, "read: \(reasons)")
        let pinEntry = page.entry(Prompt.Kind.enterPin.method)
        for reason in reasons {
            #expect(pinEntry.hasTag(reason), "authkeyd-protocol(7) does not describe the reason \(reason) under ui.enterPin")
        }
        let kinds = try SwiftSource("Sources/AuthProtocol/Wire/Prompts.swift").cases(of: "Kind")
        #expect(kinds.count >= 3 && kinds.allSatisfy { OperationInfo.Kind(rawValue: $0) != nil }, "read: \(kinds)")
        for kind in kinds {
            #expect(page.text.contains("\"\(kind)\""), "authkeyd-protocol(7) does not give the operation type \"\(kind)\"")
        }
        let answers = try SwiftSource("Sources/AuthProtocol/Wire/Prompts.swift").cases(of: "Action")
        #expect(answers == ["proceed", "cancel"], "read: \(answers)")
        for action in answers {
            #expect(page.entry("PROMPTS").words.contains(action), "authkeyd-protocol(7) does not give the prompt answer \(action)")
        }
        let authenticator = page.entry("Authenticator")
        for transport in Transport.allCases {
            #expect(authenticator.words.contains(transport.rawValue), "authkeyd-protocol(7) does not give the transport \(transport)")
        }
    }

    /// Every member of every method's parameters and result, of every
    /// prompt's parameters and answer, of every notification, and of the
    /// types the page describes, read from the protocol's own types.
    @Test func theProtocolPageGivesEveryMemberOfEveryMessage() throws {
        let page = try ManPage("authkeyd-protocol.7")
        for method in Method.clientMethods {
            let shapes = try #require(
                Shapes.methods[method],
                "\(method) has no entry in Shapes.methods: give it an example of its params and result, so its documentation is checked")
            let entry = page.entry(method)
            let (sent, answered) = entry.aroundArrow
            for member in (shapes.params.map(members) ?? []) where !shapes.ignored.contains(member) {
                #expect(sent.words.contains(member), "authkeyd-protocol(7) does not give \(member) among the params of \(method)")
            }
            for member in shapes.result.map(members) ?? [] where !shapes.ignored.contains(member) {
                #expect(answered.words.contains(member), "authkeyd-protocol(7) does not give \(member) in the result of \(method)")
            }
        }
        for (prompt, example) in Shapes.prompts {
            let entry = page.entry(prompt)
            for member in members(of: example) {
                #expect(entry.words.contains(member), "authkeyd-protocol(7) does not give \(member) among the params of \(prompt)")
            }
        }
        for member in members(of: PromptReply(action: .proceed)) {
            #expect(page.entry("PROMPTS").words.contains(member), "authkeyd-protocol(7) does not give \(member), a member of a prompt's answer")
        }
        for member in members(of: Shapes.operationStatus) {
            #expect(page.entry(Method.operationStatus).words.contains(member), "authkeyd-protocol(7) does not give \(member) of operation.status")
        }
        for (notification, example) in Shapes.notifications {
            for member in members(of: example) {
                #expect(page.entry(notification).words.contains(member), "authkeyd-protocol(7) does not give \(member) of \(notification)")
            }
        }
        for (section, example) in Shapes.types {
            let entry = page.entry(section)
            #expect(!entry.lines.isEmpty, "authkeyd-protocol(7) has no section \(section)")
            for member in members(of: example) {
                #expect(entry.words.contains(member), "authkeyd-protocol(7) does not give \(member) under \(section)")
            }
        }
    }

    // MARK: authkeyd(8), authkeyd.conf(5), authkeyd-virtkey(1)

    @Test func authkeydsPageHasEveryFlag() throws {
        let page = try ManPage("authkeyd.8")
        let flags = try HelpText.of("authkeyd").flags
        #expect(flags.contains("--virtual-key") && flags.contains("--config"), "flags read from --help: \(flags)")
        for flag in flags {
            #expect(page.mentions(flag), "authkeyd(8) does not mention \(flag)")
        }
    }

    @Test func theConfigurationPageHasEverySetting() throws {
        let page = try ManPage("authkeyd.conf.5")
        let settings = try HelpText.of("authkeyd").settings
        #expect(settings.count >= 10, "settings read from authkeyd --help: \(settings)")
        for setting in settings {
            let described = page.lines.contains { $0.words.starts(with: [setting, "="]) }
            #expect(described, "authkeyd.conf(5) has no entry \"\(setting) = …\"")
        }
    }

    @Test func theVirtualKeysPageHasEveryOption() throws {
        let page = try ManPage("authkeyd-virtkey.1")
        let help = try HelpText.of("authkeyd-virtkey")
        // Its options are the lines that start with one; --help mentions
        // authkeyd's --virtual-key too.
        let options = help.optionLines
        #expect(options.isSuperset(of: ["--socket", "--uhid", "--fault", "--fault-after"]), "options read from --help: \(options)")
        for option in options {
            #expect(page.hasTag(option), "authkeyd-virtkey(1) does not describe \(option)")
        }
        for flag in help.flags {
            #expect(page.mentions(flag), "authkeyd-virtkey(1) does not mention \(flag)")
        }
    }

    /// A `--virtual-key` spec takes the settings `authkeyd-virtkey` takes.
    @Test func everyVirtualKeySettingIsInAuthkeydsPageAndTheConfigurationPage() throws {
        let daemonPage = try ManPage("authkeyd.8")
        let virtualKeys = daemonPage.entry("VIRTUAL KEYS")
        let configuration = try ManPage("authkeyd.conf.5").entry("virtual-key")
        let names = VirtualKeyConfiguration.specSettings.map(\.name)
        #expect(names.contains("fault") && names.contains("state"))
        for name in names {
            #expect(virtualKeys.hasTag(name), "authkeyd(8) VIRTUAL KEYS does not describe \(name)")
            #expect(configuration.words.contains(name), "authkeyd.conf(5) virtual-key does not name \(name)")
        }
    }

    // MARK: authkeyd-sk(7)

    /// Every error code and entry point the provider's C declarations
    /// have (sk-api.h, sk-api.map, read now) is in its page: each code as
    /// a tag with its value under DIAGNOSTICS, each exported function by
    /// name; and the page gives the path `make install` installs it at.
    @Test func theProviderPageHasEveryErrorCodeAndEntryPoint() throws {
        let page = try ManPage("authkeyd-sk.7")
        let header = try String(contentsOfFile: repositoryPath("Sources/CSSHSecurityKeyAPI/sk-api.h"), encoding: .utf8)
        let codes = header.matches(of: /#define\s+(SSH_SK_ERR_[A-Z_]+)\s+\(?(-[0-9]+)/).map { (String($0.output.1), String($0.output.2)) }
        #expect(codes.map(\.0).contains("SSH_SK_ERR_DEVICE_NOT_FOUND") && codes.count >= 5, "codes read from sk-api.h: \(codes)")
        let diagnostics = page.entry("DIAGNOSTICS")
        for (name, value) in codes {
            let described = diagnostics.lines.contains { $0.words.starts(with: [name, "(\(value))"]) }
            #expect(described, "authkeyd-sk(7) DIAGNOSTICS has no entry \"\(name) (\(value))\"")
        }
        let exports = try String(contentsOfFile: repositoryPath("Sources/CSSHSecurityKeyAPI/sk-api.map"), encoding: .utf8)
        let functions = exports.matches(of: /^\s+(sk_[a-z_]+);/.anchorsMatchLineEndings()).map { String($0.output.1) }
        #expect(functions.contains("sk_api_version") && functions.count == 4, "functions read from sk-api.map: \(functions)")
        for function in functions {
            let named = page.text.contains("\(function)()")
            #expect(named, "authkeyd-sk(7) does not name \(function)()")
        }
        let installFiles = try String(contentsOfFile: repositoryPath("scripts/install-files"), encoding: .utf8)
        let installedThere = installFiles.contains("PROVIDERDIR=${PROVIDERDIR:-$PREFIX/lib/authkeyd}")
        #expect(installedThere, "scripts/install-files no longer installs the provider in $PREFIX/lib/authkeyd, where the page says")
        for shown in ["-w /usr/local/lib/authkeyd/libauthkeyd-sk.so", "SecurityKeyProvider /usr/local/lib/authkeyd/libauthkeyd-sk.so",
                      "SSH_SK_PROVIDER=/usr/local/lib/authkeyd/libauthkeyd-sk.so", "ssh-add -S /usr/local/lib/authkeyd/libauthkeyd-sk.so"] {
            let isShown = page.text.contains(shown)
            #expect(isShown, "authkeyd-sk(7) does not show \"\(shown)\"")
        }
    }

    // MARK: authctl(1)

    @Test func authctlsPageHasEveryCommandSubcommandAndOption() throws {
        let page = try ManPage("authctl.1")
        let help = try HelpText.of("authctl")
        #expect(help.commands.keys.contains("register") && help.commands.keys.contains("registrations"))
        #expect(help.commands["pin"] == ["set", "change", "retries"], "read from authctl --help: \(help.commands)")
        for (command, subcommands) in help.commands {
            #expect(page.hasTag(command), "authctl(1) does not describe \(command)")
            for subcommand in subcommands {
                // A tag of its own: `pin set KEY`.
                let described = page.lines.contains { $0.words.starts(with: [command, subcommand]) }
                #expect(described, "authctl(1) does not describe \(command) \(subcommand)")
            }
            for option in help.options[command, default: []] {
                #expect(page.mentions(option), "authctl(1) does not mention \(option), an option of \(command)")
            }
        }
        for option in help.flags {
            #expect(page.mentions(option), "authctl(1) does not mention \(option)")
        }
        // And the other way round: no option the command no longer has.
        for option in page.flags where !help.flags.contains(option) {
            Issue.record("authctl(1) mentions \(option), which authctl --help does not")
        }
    }

    // MARK: Completions

    @Test func theCompletionsKnowEveryCommandAndOption() throws {
        let help = try HelpText.of("authctl")
        for file in ["authctl.bash", "_authctl", "authctl.fish"] {
            let script = try String(contentsOfFile: repositoryPath("completions/\(file)"), encoding: .utf8)
            for (command, subcommands) in help.commands {
                for word in [command] + subcommands {
                    let offered = script.contains(word)
                    #expect(offered, "completions/\(file) does not offer \(word)")
                }
            }
            for option in help.flags {
                // fish spells --name as `-l name`.
                let known = script.contains(option) || script.contains("-l \(option.dropFirst(2))")
                #expect(known, "completions/\(file) does not offer \(option)")
            }
        }
    }

    /// Each shell completes, as it would at a prompt: the commands, each
    /// command's subcommands, and each command's options (those its lines
    /// in `authctl --help` show, and the global ones).
    @Test(arguments: Shell.allCases)
    func eachShellCompletesEveryCommandSubcommandAndOption(_ shell: Shell) throws {
        let help = try HelpText.of("authctl")
        var lines = ["authctl ", "authctl --"]
        var expected: [[String]] = [Array(help.commands.keys), help.globalOptions]
        for (command, subcommands) in help.commands.sorted(by: { $0.key < $1.key }) {
            if !subcommands.isEmpty {
                lines.append("authctl \(command) ")
                expected.append(subcommands)
            }
            lines.append("authctl \(command) --")
            expected.append(help.options[command, default: []] + help.globalOptions)
        }
        #expect(expected[1].contains("--socket") && help.options["register"]?.contains("--pin-fd") == true, "read: \(help.options)")
        let offered = try shell.complete(lines)
        for (index, line) in lines.enumerated() {
            let missing = Set(expected[index]).subtracting(offered[index])
            #expect(missing.isEmpty, "\(shell) completing \"\(line)\" offers \(offered[index].sorted()), not \(missing.sorted())")
        }
    }

    /// Key ids come from the daemon the command line names.
    @Test(arguments: Shell.allCases)
    func eachShellCompletesTheKeysOfTheDaemon(_ shell: Shell) throws {
        let daemon = try DaemonProcess(["--virtual-key", "name=Completed Key"])
        // READY=1 may come a moment before the virtual key is plugged in.
        let present = waitUntil(timeout: .seconds(10)) {
            (try? runWithin(.seconds(10), builtProduct("authctl"), ["--socket", daemon.socketPath, "list"]))?
                .standardOutput.contains("Completed Key") == true
        }
        try #require(present, "the daemon serves no key v1; log:\n\(daemon.log)")
        let socket = ["authctl", "--socket", daemon.socketPath]
        let lines = [
            (socket + ["info", ""]), (socket + ["pin", "set", ""]), (socket + ["reset", ""]),
            (socket + ["register", "--authenticator", ""]),
        ].map { $0.joined(separator: " ") }
        let offered = try shell.complete(lines)
        for (index, line) in lines.enumerated() {
            #expect(offered[index].contains("v1"), "\(shell) completing \"\(line)\" offers \(offered[index].sorted()), not the key v1")
        }
    }

    /// bash's own completion machinery, driven as the shell drives it.
    @Test func bashCompletesCommandsSubcommandsAndValues() throws {
        let script = """
            source \(repositoryPath("completions/authctl.bash"))
            complete_line() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _authctl; echo "${COMPREPLY[*]}"; }
            complete_line authctl re
            complete_line authctl registrations ""
            complete_line authctl assert --uv ""
            complete_line authctl register --res
            complete_line authctl config always-uv v1 ""
            """
        let result = try runWithin(.seconds(30), "/bin/bash", ["-c", script])
        #expect(result.succeeded, "\(result)")
        #expect(result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).prefix(5) == [
            "register registrations reset", "list rename delete", "required preferred discouraged", "--resident", "on off",
        ])
    }

    // MARK: All pages

    @Test func everyPageIsCleanUnderMandocLint() throws {
        for page in try FileManager.default.contentsOfDirectory(atPath: repositoryPath("man")).sorted() {
            let lint = try runWithin(.seconds(30), try mandoc(), ["-Tlint", "-W", "warning", repositoryPath("man/\(page)")])
            #expect(lint.standardOutput.isEmpty && lint.standardError.isEmpty, "mandoc -Tlint \(page):\n\(lint)")
        }
    }

    /// `make install` (scripts/install-files) installs every page and every
    /// completion there is, each in its place.
    @Test func everyPageAndCompletionIsInstalled() throws {
        let script = try String(contentsOfFile: repositoryPath("scripts/install-files"), encoding: .utf8)
        let installed = script.split(separator: "\n").map { $0.words }
        for page in try FileManager.default.contentsOfDirectory(atPath: repositoryPath("man")) {
            let section = try #require(page.split(separator: ".").last)
            let line = installed.first { $0.first == "man/\(page)" }
            #expect(line?.dropFirst().first == "$MANDIR/man\(section)", "scripts/install-files does not install man/\(page) in $MANDIR/man\(section)")
        }
        for completion in try FileManager.default.contentsOfDirectory(atPath: repositoryPath("completions")) {
            #expect(installed.contains { $0.first == "completions/\(completion)" }, "scripts/install-files does not install completions/\(completion)")
        }
    }
}

/// A file of this repository (the tests run from the package's directory
/// or elsewhere: found from this file's own path).
func repositoryPath(_ relative: String) -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(relative).path
}

/// mandoc, which `scripts/install-deps` installs.
private func mandoc() throws -> String {
    try #require(isInstalled("mandoc"), "needs mandoc (Debian package mandoc; scripts/install-deps installs it)")
    return "/usr/bin/mandoc"
}

// MARK: - What the code has

/// An example of each message, for its members: a new member of a type
/// the protocol sends or takes must be documented where the message is.
/// Members of types with a section of their own (Authenticator,
/// Registration, OperationInfo, …) are checked in that section.
private enum Shapes {
    struct Shape {
        var params: Any?
        var result: Any?
        /// Members of a params or result type shared with another method
        /// that this one reads no value from, or never sends.
        var ignored: Set<String> = []
    }

    static let key = Authenticator(
        id: "v1", path: "virtual:Key", transport: .virtual, manufacturer: "authkeyd", product: "Key", vendorId: 0, productId: 0,
        aaguid: "", name: "Key", pin: true, pinSet: true, uv: true, uvSet: true, rk: true, credMgmt: true, bioEnroll: true,
        alwaysUv: false)
    static let info = AuthenticatorInfoWire(
        versions: [], extensions: [], aaguid: "", options: [:], algorithms: [], maxMsgSize: 0, pinProtocols: [],
        maxCredentialCountInList: 0, maxCredentialIdLength: 0, transports: [], firmwareVersion: 0, minPinLength: 4,
        forcePinChange: false, maxCredBlobLength: 0, remainingDiscoverableCredentials: 0, uvModality: 0, pinRetries: 8,
        uvRetries: 8)
    static let user = StoredCredentials.User(id: Base64URLBytes([1]), name: "alice", displayName: "Alice")
    static let registration = Registration(
        id: "AQ", rpId: "example.org", rpName: "Example", user: CreateParams.User(id: Base64URLBytes([1]), name: "alice", displayName: "Alice"),
        aaguid: "", authenticatorProduct: "Key", transport: .virtual, friendlyName: "Key", residentKey: true, createdAt: 0,
        lastUsedAt: 0, signCount: 0)
    static let operation = OperationInfo(
        type: .management, rpId: "example.org", rpName: "Example", userName: "alice", userDisplayName: "Alice",
        request: .integer(1), origin: "https://example.org", action: ManagementMethod.setPin,
        requester: Requester(pid: 1, uid: 0, command: "sudo", client: "test/1"))
    static let operationStatus = OperationStatus(
        request: .integer(1), status: .sampleCaptured, authenticator: "v1", remainingSamples: 0, sampleStatus: 0, operation: operation)
    /// The notifications but operation.status, each with an example.
    static var notifications: [String: Any] { [
        AuthProtocol.Method.agentReplaced: AgentReplaced(pid: 1, token: "00"),
        AuthProtocol.Method.agentCallback: AgentCallbackNotice(token: "00"),
        AuthProtocol.Method.shuttingDown: ShuttingDown(idle: true),
        AuthProtocol.Method.operationCancelled: OperationCancelled(request: "op-1", reason: .cancelled, message: "gone"),
        AuthProtocol.Method.operationFinished: OperationFinished(request: "op-1", succeeded: false, reason: .timeout, message: "late"),
    ] }
    static let changedKey = AuthenticatorEvent(authenticator: key)
    static let fingerprint = Fingerprint(templateId: "AQ", name: "Thumb")

    static var methods: [String: Shape] {
        [
            AuthProtocol.Method.hello: .init(
                params: HelloParams(protocol: 1, client: "test/1", ui: ["selectCredential"]),
                result: HelloResult(protocol: 1, daemon: "authkeyd/0", capabilities: [], uid: 0, canManage: true)),
            AuthProtocol.Method.listAuthenticators: .init(result: AuthenticatorList(authenticators: [key])),
            AuthProtocol.Method.authenticatorInfo: .init(
                params: AuthenticatorParams(authenticator: "v1"), result: AuthenticatorDetails(authenticator: key, info: info)),
            AuthProtocol.Method.watchAuthenticators: .init(result: AuthenticatorList(authenticators: [key])),
            AuthProtocol.Method.selectAuthenticator: .init(params: SelectParams(timeout: 1000), result: changedKey),
            AuthProtocol.Method.cancelOperation: .init(params: CancelParams(id: .integer(1))),
            AuthProtocol.Method.createCredential: .init(
                params: {
                    var create = CreateParams(
                        rp: .init(id: "example.org", name: "Example"), user: .init(id: Base64URLBytes([1]), name: "alice", displayName: "Alice"),
                        challenge: Base64URLBytes([1]))
                    create.timeout = 1
                    create.excludeCredentials = [CredentialDescriptor(id: Base64URLBytes([1]), transports: [.usb])]
                    create.authenticatorSelection = .init(residentKey: .required, requireResidentKey: true, userVerification: .required)
                    create.extensions = CreateExtensions()
                    return create
                }(),
                result: CredentialResult(credential: .null, registration: registration, clientDataHash: Base64URLBytes([1]))),
            AuthProtocol.Method.getCredential: .init(
                params: {
                    var get = GetParams(challenge: Base64URLBytes([1]), rpId: "example.org")
                    get.allowCredentials = [CredentialDescriptor(id: Base64URLBytes([1]), transports: [.usb])]
                    get.extensions = GetExtensions()
                    get.transaction = Transaction(details: ["Payee": "Bob"])
                    return get
                }(),
                result: CredentialResult(credential: .null, registration: registration, clientDataHash: Base64URLBytes([1]))),
            AuthProtocol.Method.listRegistrations: .init(result: RegistrationList(registrations: [registration])),
            AuthProtocol.Method.renameRegistration: .init(params: RenameRegistrationParams(id: "AQ", friendlyName: "Key")),
            AuthProtocol.Method.deleteRegistration: .init(params: RegistrationIDParams(id: "AQ")),
            AuthProtocol.Method.registerAgent: .init(
                params: AgentRegisterParams(callback: "authkeyd-agent.1000.0", token: "00"),
                result: AgentRegistration(registered: true, uid: 1000, callback: false, callbackError: "unreachable")),
            // AgentRegistration serves register too; unregister keeps no callback.
            AuthProtocol.Method.unregisterAgent: .init(
                result: AgentRegistration(registered: false, uid: 1000), ignored: ["callback", "callbackError"]),
            ManagementMethod.setPin: .init(params: AuthenticatorParams(authenticator: "v1"), result: changedKey),
            ManagementMethod.changePin: .init(params: AuthenticatorParams(authenticator: "v1"), result: changedKey),
            ManagementMethod.pinRetries: .init(params: AuthenticatorParams(authenticator: "v1"), result: RetriesResult(pinRetries: 8, uvRetries: 8)),
            ManagementMethod.reset: .init(params: ResetParams(authenticator: "v1", confirm: "Key"), result: changedKey),
            ManagementMethod.listCredentials: .init(
                params: ListCredentialsParams(authenticator: "v1", rpId: "example.org"),
                result: StoredCredentials(existing: 1, remaining: 24, relyingParties: [
                    .init(id: "example.org", name: "Example", credentials: [
                        .init(credentialId: "AQ", user: user, credProtect: 1, registration: registration)
                    ])
                ])),
            ManagementMethod.deleteCredential: .init(params: CredentialParams(authenticator: "v1", credentialId: "AQ")),
            ManagementMethod.updateCredentialUser: .init(params: UpdateUserParams(authenticator: "v1", credentialId: "AQ", user: user)),
            ManagementMethod.fingerprintSensor: .init(
                params: AuthenticatorParams(authenticator: "v1"), result: FingerprintSensor(kind: 1, samplesRequired: 4)),
            ManagementMethod.enrollFingerprint: .init(params: EnrollParams(authenticator: "v1", name: "Thumb"), result: fingerprint),
            ManagementMethod.listFingerprints: .init(
                params: AuthenticatorParams(authenticator: "v1"), result: FingerprintList(fingerprints: [fingerprint])),
            ManagementMethod.renameFingerprint: .init(
                params: FingerprintParams(authenticator: "v1", templateId: "AQ", name: "Thumb"), result: fingerprint),
            // FingerprintParams serves rename too; delete reads no name.
            ManagementMethod.deleteFingerprint: .init(
                params: FingerprintParams(authenticator: "v1", templateId: "AQ", name: nil), ignored: ["name"]),
            ManagementMethod.setAlwaysUv: .init(params: AlwaysUvParams(authenticator: "v1", enabled: true), result: changedKey),
            ManagementMethod.setMinPinLength: .init(
                params: MinPinLengthParams(authenticator: "v1", length: 6, rpIds: ["example.org"], forceChange: true), result: changedKey),
        ]
    }

    static var prompts: [String: Any] {
        [
            Prompt.Kind.selectAuthenticator.method: SelectAuthenticatorPrompt(operation: operation, authenticators: [key]),
            Prompt.Kind.enterPin.method: EnterPinPrompt(operation: operation, authenticator: key, reason: .required, retries: 8, minLength: 4),
            Prompt.Kind.confirmTransaction.method: ConfirmTransactionPrompt(operation: operation, transaction: Transaction(details: [:])),
            Prompt.Kind.describeAuthenticator.method: DescribeAuthenticatorPrompt(
                operation: operation, authenticator: key, credentialId: "AQ", suggestion: "Key"),
            Prompt.Kind.selectCredential.method: SelectCredentialPrompt(
                operation: operation, authenticator: key,
                credentials: [.init(id: "AQ", user: user, registration: registration)]),
        ]
    }

    /// The sections of TYPES, and the prompts' OperationInfo.
    static var types: [(String, Any)] {
        [("Authenticator", key), ("AuthenticatorInfo", info), ("Registration", registration), ("PROMPTS", operation)]
    }

    /// Types whose members are checked where they have a section of their own.
    static func isDescribedElsewhere(_ value: Any) -> Bool {
        value is Authenticator || value is AuthenticatorInfoWire || value is Registration || value is OperationInfo
            || value is Transaction || value is Base64URLBytes || value is JSONValue
    }
}

/// The JSON members of a value, as its stored properties name them
/// (the protocol's types have no CodingKeys of their own), and those of
/// the structures inside it, but not of the types that have a section
/// of their own.
private func members(of value: Any) -> [String] {
    var names: [String] = []
    for child in Mirror(reflecting: value).children {
        guard let label = child.label else { continue }
        names.append(label)
        names += nested(child.value).flatMap(members)
    }
    return names
}

/// The structures a member holds: itself, the wrapped value of an
/// optional, the first element of an array.
private func nested(_ value: Any) -> [Any] {
    let mirror = Mirror(reflecting: value)
    switch mirror.displayStyle {
    case .optional: return mirror.children.first.map { nested($0.value) } ?? []
    case .collection: return mirror.children.first.map { nested($0.value) } ?? []
    case .struct: return Shapes.isDescribedElsewhere(value) ? [] : [value]
    default: return []
    }
}

/// A Swift file of the sources, for what the running code cannot list:
/// the cases of an enum that is not CaseIterable.
private struct SwiftSource {
    let text: String

    init(_ relative: String) throws {
        text = try String(contentsOfFile: repositoryPath(relative), encoding: .utf8)
    }

    /// The cases of `enum NAME`, each line `case word` up to its closing brace.
    func cases(of name: String) -> [String] {
        guard let start = text.firstMatch(of: try! Regex("enum \(name)\\b[^{]*\\{")) else { return [] }
        var depth = 1
        var body = ""
        for character in text[start.range.upperBound...] {
            if character == "{" { depth += 1 }
            if character == "}" { depth -= 1 }
            if depth == 0 { break }
            body.append(character)
        }
        return body.split(separator: "\n").flatMap { line -> [String] in
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("case ") else { return [] }
            return trimmed.dropFirst(5).split(separator: ",").compactMap { $0.words.first.map { String($0.prefix { $0.isLetter || $0.isNumber }) } }
        }
    }
}

// MARK: - What the pages say

/// A man page as a reader sees it: rendered by mandoc, without the
/// overstrikes that make bold and underline.
private struct ManPage: CustomStringConvertible {
    let name: String
    let text: String
    let lines: [Substring]
    /// What a failed expectation shows: the name, not the whole page.
    var description: String { name }

    init(_ name: String) throws {
        self.name = name
        // Wide enough that no tag line wraps.
        let rendered = try runWithin(.seconds(30), try mandoc(), ["-Tascii", "-Owidth=200", repositoryPath("man/\(name)")])
        try #require(rendered.succeeded, "mandoc \(name): \(rendered)")
        text = rendered.standardOutput.replacing(/.\x{8}/, with: "")
        lines = text.split(separator: "\n")
    }

    private init(name: String, lines: [Substring]) {
        self.name = name
        self.lines = lines
        text = lines.joined(separator: "\n")
    }

    /// Whether a line starts with `name` (after the indent): a tag of a list.
    func hasTag(_ name: String) -> Bool {
        lines.contains { $0.words.first == name }
    }

    /// The part of the page that `tag` heads: its line, and the lines after
    /// it that are indented further (a list entry's body, a section's
    /// text). Empty when there is no such tag.
    func entry(_ tag: String) -> ManPage {
        let tagWords = tag.split(separator: " ").map(String.init)
        // The heading or tag alone on its line, else the first line it starts.
        guard let start = lines.firstIndex(where: { $0.words == tagWords }) ?? lines.firstIndex(where: { $0.words.first == tag })
        else { return ManPage(name: "\(name) \(tag)", lines: []) }
        let indent = lines[start].prefix { $0 == " " }.count
        let body = lines[(start + 1)...].prefix { $0.prefix { $0 == " " }.count > indent }
        return ManPage(name: "\(name) \(tag)", lines: [lines[start]] + body)
    }

    /// The words of the text, such as member names and settings: runs of
    /// letters and digits, joined by hyphens (`presence-timeout`).
    var words: Set<String> {
        Set(text.matches(of: /[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*/).map { String($0.output) })
    }

    /// A method's entry cut at its first arrow: the params before, the
    /// result after. All of it on both sides when there is no arrow.
    var aroundArrow: (ManPage, ManPage) {
        guard let arrow = text.range(of: "->") else { return (self, self) }
        let before = text[..<arrow.lowerBound].split(separator: "\n"), after = text[arrow.upperBound...].split(separator: "\n")
        return (ManPage(name: "\(name) params", lines: before), ManPage(name: "\(name) result", lines: after))
    }

    /// Whether `--flag` appears as itself, not as the start of a longer one.
    func mentions(_ flag: String) -> Bool {
        flags.contains(flag)
    }

    /// Every `--flag` the page mentions.
    var flags: Set<String> { longOptions(in: text) }
}

/// What a built program's `--help` lists.
private struct HelpText {
    let text: String

    static func of(_ program: String) throws -> HelpText {
        let result = try runWithin(.seconds(30), builtProduct(program), ["--help"])
        try #require(result.succeeded, "\(program) --help: \(result)")
        return HelpText(text: result.standardOutput)
    }

    /// Every `--flag` (not `--SETTING`, a placeholder).
    var flags: Set<String> { longOptions(in: text) }

    /// The options of the lines that start with one (indented by two
    /// blanks): those the program takes, not those it mentions.
    var optionLines: Set<String> {
        Set(text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  --"), let first = line.words.first else { return nil }
            return longOptions(in: first).first
        })
    }

    /// authkeyd's settings: the `--name VALUE` lines after "Settings".
    var settings: [String] {
        guard let start = text.range(of: "\nSettings") else { return [] }
        return text[start.upperBound...].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  --"), !line.hasPrefix("   ") else { return nil }
            return line.words.first.map { String($0.dropFirst(2)) }
        }
    }

    /// authctl's commands and each one's subcommands, from the lines of its
    /// command lists: `  pin set ID | change ID | retries ID`, continued on
    /// lines that start with `|`, a description after two blanks. A
    /// subcommand is the lower-case word that starts an alternative.
    var commands: [String: [String]] {
        var commands: [String: [String]] = [:]
        for (command, synopsis) in synopses {
            commands[command, default: []] += Self.subcommands(synopsis)
        }
        return commands
    }

    /// Each command's own options: those on its lines in the command
    /// lists, and those of the sections "register options:", "register and
    /// assert options:" and the like, whose lines start with the option.
    var options: [String: [String]] {
        var options: [String: Set<String>] = [:]
        for (command, synopsis) in synopses {
            options[command, default: []].formUnion(longOptions(in: String(synopsis)))
        }
        for (commands, option) in sectionOptions where !commands.isEmpty {
            for command in commands { options[command, default: []].insert(option) }
        }
        return options.mapValues { $0.sorted() }
    }

    /// The options of the section "Options:", which every command takes.
    var globalOptions: [String] {
        sectionOptions.filter { $0.commands.isEmpty }.map(\.option)
    }

    /// The command lines, command by command: what follows the command's
    /// name up to the description, and the continuation lines.
    private var synopses: [(command: String, synopsis: Substring)] {
        var synopses: [(String, Substring)] = []
        var current: String?
        for line in text.split(separator: "\n") {
            let synopsis = Self.withoutDescription(line.drop(while: { $0 == " " }))
            if line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.words.first, word.first!.isLowercase {
                current = word
                synopses.append((word, synopsis.dropFirst(word.count)))
            } else if let command = current, synopsis.hasPrefix("|") {
                synopses.append((command, synopsis))
            } else if !line.hasPrefix(" ") {
                current = nil
            }
        }
        return synopses
    }

    /// The options listed in the sections "… options:" and "Options:",
    /// with the commands the heading names (none for "Options:").
    private var sectionOptions: [(commands: [String], option: String)] {
        var found: [(commands: [String], option: String)] = []
        var commands: [String]?
        for line in text.split(separator: "\n") {
            if !line.hasPrefix(" ") {
                commands = line.hasSuffix("options:") || line == "Options:"
                    ? line.dropLast("options:".count).words.filter { $0 != "and" } : nil
            } else if let commands, line.hasPrefix("  --") {
                for option in longOptions(in: String(Self.withoutDescription(line.dropFirst(2)))).sorted() {
                    found.append((commands, option))
                }
            }
        }
        return found
    }

    /// A help line up to the two blanks that start its description.
    private static func withoutDescription(_ line: Substring) -> Substring {
        line.firstRange(of: "  ").map { line[..<$0.lowerBound] } ?? line
    }

    /// The alternatives are separated by ` | `; a bare `|` is part of one
    /// (`on|off`).
    private static func subcommands(_ alternatives: Substring) -> [String] {
        let text = alternatives.hasPrefix("|") ? alternatives.dropFirst() : alternatives
        return text.split(separator: " | ").compactMap { alternative in
            guard let word = alternative.words.first, word.allSatisfy({ $0.isLowercase || $0 == "-" }), word.first != "-"
            else { return nil }
            return word
        }
    }
}

/// `--word` and `--two-words`, but not `--WORD`.
private func longOptions(in text: String) -> Set<String> {
    Set(text.matches(of: /--[a-z][a-z0-9]*(?:-[a-z0-9]+)*/).map { String($0.output) })
}

extension Substring {
    /// The words of a line, blanks and commas aside.
    fileprivate var words: [String] {
        split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
    }
}

extension String {
    fileprivate var words: [String] { self[...].words }
}

// MARK: - The shells

/// A shell with authctl's completion loaded, asked what it offers after a
/// command line, as if TAB were pressed at its end.
enum Shell: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case bash, zsh, fish

    var testDescription: String { rawValue }

    /// What the shell offers after each line, in order. authctl (for the
    /// key ids) is the built one.
    func complete(_ lines: [String]) throws -> [Set<String>] {
        try #require(isInstalled(rawValue), "needs \(rawValue) (Debian package \(rawValue))")
        let home = TemporaryDirectory(prefix: "authkeyd-\(rawValue)")
        let environment = [
            "PATH": "\(builtProductsDirectory):\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")",
            "HOME": home.path, "XDG_CONFIG_HOME": home.file("config"), "XDG_DATA_HOME": home.file("data"),
            "XDG_CACHE_HOME": home.file("cache"), "AUTHKEYD_SOCKET": home.file("no-daemon.sock"),
        ]
        let result: BoundedRun
        switch self {
        case .bash:
            let script = """
                source \(shellQuoted(repositoryPath("completions/authctl.bash")))
                complete_line() {
                    read -r -a COMP_WORDS <<< "$1"
                    [[ $1 == *" " ]] && COMP_WORDS+=("")
                    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _authctl
                    printf '%s\\n' "${COMPREPLY[@]}" --
                }
                """ + lines.map { "\ncomplete_line \(shellQuoted($0))" }.joined()
            result = try runWithin(.seconds(60), "/bin/bash", ["--norc", "--noprofile", "-c", script], environment: environment)
        case .zsh:
            let driver = home.file("complete.zsh")
            try Self.zshDriver.write(toFile: driver, atomically: false, encoding: .utf8)
            result = try runWithin(
                .seconds(60), "/usr/bin/zsh", ["-f", driver, repositoryPath("completions")],
                input: lines.joined(separator: "\n") + "\n", environment: environment)
        case .fish:
            let script = "source \(shellQuoted(repositoryPath("completions/authctl.fish")))"
                + lines.map { "\ncomplete -C \(shellQuoted($0)); printf '%s\\n' --" }.joined()
            result = try runWithin(.seconds(60), "/usr/bin/fish", ["--no-config", "-c", script], environment: environment)
        }
        try #require(result.succeeded, "\(self): \(result)")
        // One group of words a line, each group ended by "--"; fish adds a
        // description after a tab.
        var groups: [Set<String>] = [[]]
        for line in result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "--" { groups.append([]) } else if !line.isEmpty {
                groups[groups.count - 1].insert(String(line.prefix { $0 != "\t" }))
            }
        }
        try #require(groups.count == lines.count + 1, "\(self) answered \(groups.count - 1) lines of \(lines.count): \(result)")
        return Array(groups.dropLast())
    }

    /// zsh completes only in its line editor: this drives an interactive
    /// zsh on a pseudo-terminal (zsh/zpty), types each line of standard
    /// input and a TAB, and prints the matches compadd was given, then
    /// "--", then clears the line. $1 is the directory of `_authctl`.
    static let zshDriver = #"""
        zmodload zsh/zpty
        init=$(mktemp)
        trap 'rm -f $init' EXIT
        cat > $init <<INIT
        PROMPT=
        fpath=($1 \$fpath)
        autoload -Uz compinit
        compinit -u -D
        __mark() { print -r -- \$'\\0'MARK }
        # compprefuncs and comppostfuncs are emptied after each completion.
        __complete() { compprefuncs=(__mark); comppostfuncs=(__mark); zle complete-word }
        zle -N __complete
        bindkey '^I' __complete
        bindkey '^U' kill-whole-line
        zstyle ':completion:*' list-grouped false
        zstyle ':completion:*' insert-tab false
        compadd() {
            if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "\$@"; return; fi
            typeset -a __hits
            builtin compadd -A __hits "\$@"
            local h
            for h in \$__hits; do print -r -- "MATCH:\$h"; done
        }
        print READY
        INIT
        zpty z zsh -f -i
        zpty -w z "source $init"
        while zpty -r z line; do [[ $line == READY* ]] && break; done
        while IFS= read -r query; do
          zpty -w -n z "$query"$'\t'
          integer seen=0
          while zpty -r z line; do
            [[ $line == *MARK* ]] && { (( seen++ )) && break || continue }
            (( seen )) && [[ $line == *MATCH:* ]] && print -r -- "${${line#*MATCH:}%%$'\r'*}"
          done
          print -- --
          zpty -w -n z $'\C-u'
        done
        zpty -d z
        """#
}

/// A word for a POSIX shell (fish reads the same quoting), in single quotes.
private func shellQuoted(_ word: String) -> String {
    "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}
