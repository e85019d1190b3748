import AuthClient
import AuthProtocol
import SystemKit

/// One call's connection to authkeyd, with the provider's prompts set:
/// opened for each sk_* call and closed at its end, so that nothing of the
/// provider outlives the call in ssh-sk-helper.
struct BrokerSession {
    let client: AuthClient
    let prompts: ProviderPrompts

    /// Connects to the socket authctl would use (`AUTHKEYD_SOCKET`, the
    /// user's instance, the system's) and says hello.
    static func open(environment: [String: String], pin: SecretBytes?) async throws(ProviderError) -> BrokerSession {
        let path = AuthClient.defaultSocketPath(environment: environment)
        let client: AuthClient
        do {
            client = try AuthClient(socketPath: path)
        } catch {
            throw ProviderError(error, while: "reaching authkeyd")
        }
        let prompts = ProviderPrompts(pin: pin)
        client.setUI(prompts)
        // A daemon that is stopped or stuck must not hang ssh: one that does
        // not answer hello at once is absent (SSH_SK_ERR_DEVICE_NOT_FOUND),
        // and one that goes silent during a request is gone.
        client.giveUpWhenSilent(for: AuthClient.helloSilenceLimit)
        do {
            _ = try await client.hello(client: "authkeyd-sk/\(providerVersion)", ui: prompts)
        } catch {
            client.close()
            throw ProviderError(error, while: "greeting authkeyd")
        }
        client.giveUpWhenSilent(for: AuthClient.requestSilenceLimit)
        return BrokerSession(client: client, prompts: prompts)
    }

    func close() {
        prompts.close()
        client.close()
    }

    /// The error for a failed call: a cancelled PIN prompt is OpenSSH's
    /// "PIN required", whichever way the daemon then ended the request.
    func failure(_ error: AuthClientError, while activity: String) -> ProviderError {
        switch prompts.pinOutcome {
        case .missing: return .pinRequired()
        case .refused: return ProviderError(.pinRequired, "\(activity): the key refused the PIN")
        case .none: return ProviderError(error, while: activity)
        }
    }

    /// The key to enroll on: the one `device` names (an authkeyd id or a
    /// hidraw path), the only one plugged in, or the one the user touches,
    /// as OpenSSH's own middleware picks one.
    func chooseKey(device: String?) async throws(ProviderError) -> Authenticator {
        let keys = try await listKeys()
        if let device { return try Self.key(device, among: keys) }
        switch keys.count {
        case 0: throw ProviderError(.deviceNotFound, "authkeyd has no security key: plug one in (authctl list shows the keys it has)")
        case 1: return keys[0]
        default:
            writeToStandardError("authkeyd-sk: \(keys.count) security keys are plugged in: touch the one to use\n")
            do {
                return try await client.selectByTouch()
            } catch {
                throw failure(error, while: "choosing a key by touch")
            }
        }
    }

    /// The key `device` names, an authkeyd id or a hidraw path.
    func namedKey(_ device: String) async throws(ProviderError) -> Authenticator {
        try Self.key(device, among: try await listKeys())
    }

    private func listKeys() async throws(ProviderError) -> [Authenticator] {
        do {
            return try await client.listAuthenticators()
        } catch {
            throw failure(error, while: "listing the security keys")
        }
    }

    private static func key(_ device: String, among keys: [Authenticator]) throws(ProviderError) -> Authenticator {
        guard let key = keys.first(where: { $0.id == device || $0.path == device }) else {
            throw ProviderError(.deviceNotFound, "no security key \"\(device)\" (authctl list shows the keys authkeyd has)")
        }
        return key
    }
}

/// The provider's version, as `hello` reports it to the daemon's log: the
/// middleware API it implements.
let providerVersion = "sk-api-10"
