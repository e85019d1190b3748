import PAMAuthFile
import AuthClient
import AuthProtocol
import Crypto

/// How an authentication ended, before it becomes a PAM code.
public enum PAMOutcome: Sendable, Equatable {
    /// A credential of the user's signed, and the signature verified.
    case success
    /// The user is not authenticated: wrong key, refused or wrong PIN, no
    /// touch in time, a signature that does not verify (`PAM_AUTH_ERR`).
    case failed(String)
    /// Nothing could be tried: the daemon is not running or has no key
    /// (`PAM_AUTHINFO_UNAVAIL`), so a `sufficient` line falls through.
    case unavailable(String)
}

/// One authentication of `user` through authkeyd, as pam_u2f does it
/// through libfido2: for each of the user's credentials in the file's
/// order, `credentials.get` over a fresh random clientDataHash for the
/// relying party `pam://HOST` (or `origin=`), with that credential as the
/// allow list (none for a resident one); the first answer whose signature
/// verifies with the credential's enrolled key, with the flags its
/// requirements demand, authenticates. A key that holds none of the
/// credentials is passed over silently by the daemon, without a touch.
public struct PAMAuthentication: Sendable {
    public var user: String
    /// Set when the module acts for another user than the one it runs as
    /// (as root inside sudo): the daemon then applies `user`'s policy and
    /// session agent.
    public var actingFor: String?
    public var relyingParty: String
    public var options: ModuleOptions
    public var conversation: any Conversation
    public var log: any ModuleLog
    /// The daemon's per-request limit, in milliseconds; nil: its default.
    public var timeout: Int?

    public init(
        user: String, actingFor: String?, relyingParty: String, options: ModuleOptions, conversation: any Conversation,
        log: any ModuleLog, timeout: Int? = nil
    ) {
        self.user = user
        self.actingFor = actingFor
        self.relyingParty = relyingParty
        self.options = options
        self.conversation = conversation
        self.log = log
        self.timeout = timeout
    }

    public func run(_ credentials: [EnrolledCredential]) async -> PAMOutcome {
        let prompts = PAMPrompts(conversation: conversation, options: options)
        let outcome = await run(credentials, prompts: prompts)
        await prompts.finishCue()
        return outcome
    }

    private func run(_ credentials: [EnrolledCredential], prompts: PAMPrompts) async -> PAMOutcome {
        let client: AuthClient
        do {
            client = try AuthClient(socketPath: options.socketPath)
        } catch {
            return .unavailable("authkeyd is not running: \(error)")
        }
        defer { client.close() }
        client.setUI(prompts)
        // A daemon that is stopped (SIGSTOP) or stuck must not hang sudo:
        // one that does not answer hello at once is absent, and one that
        // goes silent during a request is gone (`giveUpWhenSilent`); a
        // `sufficient` line then falls through to the next.
        client.giveUpWhenSilent(for: AuthClient.helloSilenceLimit)
        do {
            _ = try await client.hello(client: "pam_authkeyd/\(moduleVersion)", ui: prompts)
        } catch {
            return .unavailable("greeting authkeyd: \(error)")
        }
        client.giveUpWhenSilent(for: AuthClient.requestSilenceLimit)

        var failures: [String] = []
        var noKey = true
        for (index, credential) in credentials.enumerated() {
            let which = "credential \(index + 1) of \(credentials.count)"
            let requirements = Requirements(credential.options, options)
            let clientDataHash = secureRandomBytes(32)
            let answer: AssertionCheck.Answer
            do {
                answer = try await ask(client, for: credential, clientDataHash: clientDataHash, requirements: requirements)
            } catch {
                switch error.reason {
                case .noCredentials?:
                    noKey = false
                    log.debug("\(which): no key present holds it")
                    continue
                case .noAuthenticator?:
                    log.debug("\(which): authkeyd has no security key")
                    continue
                case nil where !error.isDaemonError:
                    return .unavailable("authkeyd: \(error)")
                default:
                    // The key was there and the user was asked: a wrong or
                    // blocked PIN, no touch, a cancel. Asking the next
                    // credential would ask the user again for nothing.
                    return .failed("\(which): \(error)")
                }
            }
            noKey = false
            do {
                try AssertionCheck.verify(
                    answer, against: credential, relyingParty: relyingParty, clientDataHash: clientDataHash, requirements: requirements)
                log.debug("\(which): the signature verifies with the enrolled key")
                return .success
            } catch {
                log.error("\(which): authkeyd's answer was refused: \(error)")
                failures.append("\(which): \(error)")
            }
        }
        if noKey { return .unavailable("no security key is plugged in") }
        if failures.isEmpty {
            return .failed("no security key present holds a credential of \(user)'s at \(relyingParty) (authctl pam list, run as \(user), shows which keys do)")
        }
        return .failed(failures.joined(separator: "; "))
    }

    /// `credentials.get` for one credential, and the parts of the answer
    /// the check needs.
    private func ask(
        _ client: AuthClient, for credential: EnrolledCredential, clientDataHash: [UInt8], requirements: Requirements
    ) async throws(AuthClientError) -> AssertionCheck.Answer {
        var params = GetParams(challenge: nil, rpId: relyingParty)
        params.clientDataHash = Base64URLBytes(clientDataHash)
        if case .id(let id) = credential.keyHandle { params.allowCredentials = [CredentialDescriptor(id: Base64URLBytes(id))] }
        params.userVerification = requirements.verifiesUser ? .required : .discouraged
        if requirements.presence == .off { params.userPresence = false }
        params.onBehalfOf = actingFor
        params.timeout = timeout
        let result = try await client.getCredential(params)
        let json = try CredentialJSON(result.credential)
        let assertion = try json.assertion()
        return AssertionCheck.Answer(
            credentialID: json.rawId.bytes, authenticatorData: assertion.authenticatorData, signature: assertion.signature)
    }
}

/// The module's version, in `hello` and the log.
public let moduleVersion = "0.1.0"

extension AuthClientError {
    /// The daemon answered (as opposed to the connection failing).
    var isDaemonError: Bool {
        if case .daemon = self { return true }
        return false
    }
}
